package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// Notifier turns the engine's events into notices and delivers them, while this process
// leads the scheduler (one sender per data dir). Make one with New; Run it on its own
// goroutine, or call RunOnce (tests).
type Notifier struct {
	eng     *engine.Engine
	sinks   map[string]Sink
	route   []Sink
	opt     Options
	leading func() bool
	log     *slog.Logger
	client  *http.Client
	// poll is how often due retries are looked for when no change wakes the notifier.
	poll time.Duration
	// pruned is when given-up notices were last pruned (RunOnce is not run concurrently).
	pruned time.Time
}

// KeepGivenUp is how long a given-up notice stays in the outbox for doctor.
const KeepGivenUp = 7 * 24 * time.Hour

// minGap is the least time between two steps of Run: a burst of changes costs at most one
// outbox transaction per minGap.
const minGap = 200 * time.Millisecond

// batch bounds the events read and the notices delivered by one step.
const batch = 200

// New returns a notifier for sinks (checked: Sink.Check, CheckNames). leading reports
// whether this process leads the scheduler (scheduler.Scheduler.Leader); log receives every
// failed delivery (warn) and every notice given up (error).
func New(eng *engine.Engine, sinks []Sink, opt Options, leading func() bool, log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{eng: eng, sinks: map[string]Sink{}, route: sinks, opt: opt, leading: leading, log: log,
		client: &http.Client{}, poll: time.Second}
	for _, s := range sinks {
		n.sinks[s.Name] = s
	}
	return n
}

// Run steps until ctx ends: woken by every committed change, and every second for retries
// that became due. A failed step is logged and tried again at the next wake-up.
func (n *Notifier) Run(ctx context.Context) {
	sub := n.eng.Hub().Subscribe()
	defer sub.Close()
	for ctx.Err() == nil {
		if err := n.RunOnce(ctx); err != nil && ctx.Err() == nil {
			n.log.Error("notifications: a delivery step failed; trying again", "err", err)
		}
		gap := time.NewTimer(minGap)
		select {
		case <-ctx.Done():
		case <-gap.C:
		}
		gap.Stop()
		sub.Take()
		sub.Wait(ctx, n.poll)
	}
}

// RunOnce, when this process leads, queues the notices of the events not yet read and
// delivers the notices that are due: each sink's in order, one at a time (a command is never
// run twice at once), the sinks side by side; it returns once those deliveries ended, so a
// sink that runs into its timeout delays the next step (every sink's next messages) by at
// most that timeout.
func (n *Notifier) RunOnce(ctx context.Context) error {
	if !n.leading() {
		return nil
	}
	if err := n.fill(ctx); err != nil {
		return err
	}
	if err := n.prune(ctx); err != nil {
		return err
	}
	due, err := n.eng.NoticesDue(ctx, n.eng.Now(), batch)
	if err != nil {
		return err
	}
	bySink := map[string][]engine.Notice{}
	var order []string
	for _, no := range due {
		if _, ok := bySink[no.Sink]; !ok {
			order = append(order, no.Sink)
		}
		bySink[no.Sink] = append(bySink[no.Sink], no)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(order))
	for i, sink := range order {
		wg.Go(func() {
			for _, no := range bySink[sink] {
				errs[i] = errors.Join(errs[i], n.deliver(ctx, no))
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prune deletes, at most once an hour, the notices given up more than KeepGivenUp ago.
func (n *Notifier) prune(ctx context.Context) error {
	now := n.eng.Now()
	if now.Sub(n.pruned) < time.Hour {
		return nil
	}
	k, err := n.eng.PruneNotices(ctx, now.Add(-KeepGivenUp))
	if err != nil {
		return fmt.Errorf("prune given-up notifications: %w", err)
	}
	n.pruned = now
	if k > 0 {
		n.log.Info("given-up notifications pruned", "notices", k, "older_than", KeepGivenUp)
	}
	return nil
}

// fill queues the notices of every event after the outbox cursor.
func (n *Notifier) fill(ctx context.Context) error {
	for {
		skipped := 0
		read, queued, err := n.eng.FillOutbox(ctx, Route(n.route, n.opt.GiveUpAfter, n.eng.Now, &skipped), batch)
		if err != nil {
			return fmt.Errorf("queue notifications: %w", err)
		}
		if skipped > 0 {
			n.log.Warn("notifications: events older than give_up_after were not sent", "events", skipped,
				"give_up_after", n.opt.GiveUpAfter)
		}
		if queued > 0 {
			n.log.Debug("notifications queued", "events", read, "notices", queued)
		}
		if read < batch {
			return nil
		}
	}
}

// deliver tries one notice and records the outcome: deleted when delivered, else retried
// later or given up.
func (n *Notifier) deliver(ctx context.Context, no engine.Notice) error {
	s, ok := n.sinks[no.Sink]
	var err error
	if !ok {
		err = permanentError{fmt.Errorf("no [[notify]] section is named %q any more", no.Sink)}
	} else {
		err = n.send(ctx, s, no)
	}
	if ctx.Err() != nil {
		return nil // stopping: the notice stays due and is tried by the next leader
	}
	if err == nil {
		n.log.Info("notification delivered", "sink", no.Sink, "type", no.Type, "id", messageID(no), "attempts", no.Attempts+1)
		return n.eng.NoticeDelivered(ctx, no.ID)
	}
	now := n.eng.Now()
	no.Attempts++
	no.LastError = err.Error()
	no.NextAt = now.Add(engine.Backoff{Initial: n.opt.RetryInitial, Max: n.opt.RetryMax, Jitter: 0.2}.Delay(no.Attempts))
	var perm permanentError
	if errors.As(err, &perm) || no.NextAt.Sub(no.CreatedAt) > n.opt.GiveUpAfter {
		no.GaveUpAt = now
		n.log.Error("notification given up: it will not be sent", "sink", no.Sink, "type", no.Type, "id", messageID(no),
			"event_seq", no.EventSeq, "attempts", no.Attempts, "err", err)
	} else {
		n.log.Warn("notification not delivered; retrying", "sink", no.Sink, "type", no.Type, "id", messageID(no),
			"attempts", no.Attempts, "next_at", no.NextAt, "err", err)
	}
	return n.eng.NoticeFailed(ctx, no)
}

// send delivers one notice to s within its timeout.
func (n *Notifier) send(ctx context.Context, s Sink, no engine.Notice) error {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	if s.Webhook != "" {
		return postWebhook(ctx, n.client, s, no.Type, messageID(no), no.Body)
	}
	var m Message
	if err := json.Unmarshal(no.Body, &m); err != nil {
		return permanentError{fmt.Errorf("notice %d: its body is not a message: %w", no.ID, err)}
	}
	return runCommand(ctx, s, m, no.Body)
}

// messageID is the Message.ID of a notice (kept in its body; rebuilt the same way).
func messageID(no engine.Notice) string { return DeliveryID(no.EventSeq, no.Sink) }

// DeliveryID is the id a receiver gets for the notification of event seq to sink
// ("<event_seq>-<sink>": the body's id, the webhook's X-Mcp-Scheduler-Delivery header, the
// command's {id}); the same on every retry, and the id the log lines and doctor name.
func DeliveryID(seq int64, sink string) string { return fmt.Sprintf("%d-%s", seq, sink) }
