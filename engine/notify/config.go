package notify

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Sink is one [[notify]] section: where messages go and which.
type Sink struct {
	// Name identifies the sink in the outbox, logs and doctor (default "notify-<n>", n from
	// 1 in configuration order). A notice queued for a name no section has any more is given
	// up with that said.
	Name string
	// Webhook is an http(s) URL the message is POSTed to; exactly one of Webhook and Command.
	Webhook string
	// Secret signs a webhook's body (header SignatureHeader); "" sends no signature.
	Secret string
	// Command is the argv run for each message (no shell; placeholders: see Expand).
	Command []string
	// Timeout bounds one delivery (request or command run).
	Timeout time.Duration
	// Events keeps only these message types (nil: all of Types).
	Events []string
	// Voyages keeps only messages about these voyages (nil: every message, with or without a
	// voyage).
	Voyages []string
}

// Options tunes delivery for every sink.
type Options struct {
	// RetryInitial is the first retry's wait; each next one doubles, up to RetryMax (with
	// 20 % jitter).
	RetryInitial, RetryMax time.Duration
	// GiveUpAfter is how long after its event a notice is retried before it is given up
	// (logged as an error, kept for doctor). Events older than this when they are first read
	// (a scheduler that was down, a sink just configured) are not sent.
	GiveUpAfter time.Duration
}

// DefaultOptions are the delivery settings when the configuration sets none.
func DefaultOptions() Options {
	return Options{RetryInitial: 2 * time.Second, RetryMax: 5 * time.Minute, GiveUpAfter: time.Hour}
}

// DefaultTimeout bounds one delivery when a sink sets no timeout.
const DefaultTimeout = 10 * time.Second

var sinkName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// Check returns the problems of s, each naming its key under prefix ("notify[0]").
func (s Sink) Check(prefix string) []error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf(prefix+"."+key+": "+format, a...))
	}
	if err := domain.CheckName(prefix+".name", "sink names", s.Name); err != nil {
		errs = append(errs, err)
	} else if !sinkName.MatchString(s.Name) {
		bad("name", "%q must be 1 to 64 of a-z 0-9 _ . - (starting with a letter or digit)", s.Name)
	}
	switch {
	case s.Webhook == "" && len(s.Command) == 0:
		errs = append(errs, fmt.Errorf("%s: set webhook = \"https://…\" or command = [\"program\", …]", prefix))
	case s.Webhook != "" && len(s.Command) > 0:
		errs = append(errs, fmt.Errorf("%s: set either webhook or command, not both (one section per sink)", prefix))
	case s.Webhook != "":
		if u, err := url.Parse(s.Webhook); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("webhook", "%q is not an http:// or https:// URL", s.Webhook)
		}
	case s.Command[0] == "" || strings.TrimSpace(s.Command[0]) != s.Command[0]:
		bad("command", "the program (command[0]) %q must be a name or a path without surrounding spaces", s.Command[0])
	}
	if s.Secret != "" && len(s.Command) > 0 {
		bad("secret", "signs webhooks only; a command gets the message on stdin")
	}
	if s.Timeout <= 0 || s.Timeout > 10*time.Minute {
		bad("timeout", "%v must be positive and at most 10m", s.Timeout)
	}
	for i, ev := range s.Events {
		if !slices.Contains(Types, ev) {
			bad(fmt.Sprintf("events[%d]", i), "%q is not one of %s", ev, strings.Join(Types, ", "))
		}
	}
	for i, v := range s.Voyages {
		if !domain.ValidID(domain.PrefixVoyage, v) {
			bad(fmt.Sprintf("voyages[%d]", i), "%q is not a voyage id (vyg_…; copy one from mcp-scheduler voyages list, or a mission's voyage_id)", v)
		}
	}
	return errs
}

// Check returns the problems of o, each naming its key under prefix ("notify_delivery").
func (o Options) Check(prefix string) []error {
	var errs []error
	if o.RetryInitial <= 0 {
		errs = append(errs, fmt.Errorf("%s.retry_initial: %v must be positive", prefix, o.RetryInitial))
	}
	if o.RetryMax < o.RetryInitial {
		errs = append(errs, fmt.Errorf("%s.retry_max: %v must not be shorter than retry_initial %v", prefix, o.RetryMax, o.RetryInitial))
	}
	if o.GiveUpAfter < o.RetryInitial || o.GiveUpAfter > 7*24*time.Hour {
		errs = append(errs, fmt.Errorf("%s.give_up_after: %v must be at least retry_initial and at most 168h", prefix, o.GiveUpAfter))
	}
	return errs
}

// CheckNames returns an error for each sink name used twice.
func CheckNames(sinks []Sink) []error {
	var errs []error
	seen := map[string]int{}
	for i, s := range sinks {
		if j, ok := seen[s.Name]; ok {
			errs = append(errs, fmt.Errorf("notify[%d].name: %q is also notify[%d]'s: give each section its own name", i, s.Name, j))
			continue
		}
		seen[s.Name] = i
	}
	return errs
}
