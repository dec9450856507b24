// Package notify sends what a person watching the scheduler wants to hear about (an
// escalation opened, a voyage settled, a mission failed for good, a budget or rate-limit
// hold, a landing waiting for approval) to the sinks of the configuration's [[notify]]
// sections: a webhook (an HTTP POST of the JSON message, optionally signed with HMAC-SHA256)
// or a command (argv from the configuration, the message on stdin, never a shell).
//
// Delivery is at least once, across restarts: the leader's Notifier turns the engine's events
// into notices in the store's outbox (engine.FillOutbox, routed by Route, which is the one
// place that decides which events become notifications), and delivers them on its own
// goroutine, retrying with exponential backoff (cenkalti/backoff) until its give-up time. It
// never blocks the scheduler: the loop's only part in it is the events it already writes.
// docs/notifications.md describes the messages, the signature and the retries.
package notify
