package agent

import "fmt"

// UsageMessage is the task.usage message reporting u: what the attempt consumed so far,
// cumulative (each report replaces the previous one; it is not added to it). On the wire it
// is {"type":"task.usage","usage":{...}}, the usage object of worker.result, which is why it
// travels in the embedded WorkerResult's Usage (a second "usage" member on Message would
// shadow worker.result's).
func UsageMessage(u Usage) Message {
	return Message{Type: TypeUsage, WorkerResult: &WorkerResult{Usage: &u}}
}

// ReportedUsage returns the usage a task.usage message carries, and false for any other
// message or a task.usage without a usage object.
func (m Message) ReportedUsage() (Usage, bool) {
	if m.Type != TypeUsage || m.WorkerResult == nil || m.WorkerResult.Usage == nil {
		return Usage{}, false
	}
	return *m.WorkerResult.Usage, true
}

// Check reports the first thing wrong with a usage report, naming the field: counts and cost
// must not be negative, and the cache parts cannot exceed the input they are part of.
func (u Usage) Check() error {
	switch {
	case u.InputTokens < 0:
		return fmt.Errorf("usage.input_tokens is %d: report a count of zero or more", u.InputTokens)
	case u.OutputTokens < 0:
		return fmt.Errorf("usage.output_tokens is %d: report a count of zero or more", u.OutputTokens)
	case u.CacheReadTokens < 0:
		return fmt.Errorf("usage.cache_read_tokens is %d: report a count of zero or more", u.CacheReadTokens)
	case u.CacheWriteTokens < 0:
		return fmt.Errorf("usage.cache_write_tokens is %d: report a count of zero or more", u.CacheWriteTokens)
	case !(u.CostUSD >= 0):
		return fmt.Errorf("usage.cost_usd is %v: report US dollars as zero or more", u.CostUSD)
	case u.CacheReadTokens+u.CacheWriteTokens > u.InputTokens:
		return fmt.Errorf("usage.cache_read_tokens + cache_write_tokens (%d) exceed input_tokens (%d): input_tokens counts every input token, cached ones included",
			u.CacheReadTokens+u.CacheWriteTokens, u.InputTokens)
	}
	return nil
}
