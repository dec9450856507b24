package engine

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/worktree"
)

// Limits on mission fields: bad input gets a clear error, never a truncated mission.
const (
	MaxTitleLen      = 200
	MaxBriefBytes    = 256 << 10
	MaxListItems     = 64
	MaxRetryBudget   = 20
	DefaultPriority  = 100
	DefaultBudget    = 3
	MinPriority      = 1
	MaxPriority      = 1000
	maxKeyLen        = 64
	maxCriterionLen  = 2000
	maxPatternLength = 512
)

// Workspace strategies (design brief §1).
const (
	WorkspaceWorktree     = "worktree"
	WorkspaceSnapshot     = "snapshot"
	WorkspaceMain         = "main"
	WorkspaceIsolatedCopy = "isolated_copy"
)

// Review policies.
const (
	ReviewNone     = "none"
	ReviewRequired = "required"
)

var (
	namePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	keyPattern  = regexp.MustCompile(`^[A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,63}$`)
)

// MissionSpec is what a caller gives to create a mission. Zero values take defaults:
// priority 100, retry budget 3, review none, workspace worktree, the default repository.
type MissionSpec struct {
	// Key is the client key of a mission inside Dispatch; edges may refer to it.
	Key string `json:"key,omitempty"`
	// IdempotencyKey makes create safe to repeat: the same key returns the existing mission.
	IdempotencyKey     string             `json:"idempotency_key,omitempty"`
	Title              string             `json:"title"`
	Brief              string             `json:"brief,omitempty"`
	Repository         string             `json:"repository,omitempty"`
	TargetBranch       string             `json:"target_branch,omitempty"`
	Priority           int                `json:"priority,omitempty"`
	Persona            string             `json:"persona,omitempty"`
	Capabilities       []string           `json:"capabilities,omitempty"`
	WriteArea          []string           `json:"write_area,omitempty"`
	ModelPolicy        domain.ModelPolicy `json:"model_policy,omitzero"`
	Workspace          string             `json:"workspace,omitempty"`
	Review             string             `json:"review,omitempty"`
	AcceptanceCriteria []string           `json:"acceptance_criteria,omitempty"`
	Deadline           time.Time          `json:"deadline,omitzero"`
	RetryBudget        *int               `json:"retry_budget,omitempty"`
	CostLimitUSD       float64            `json:"cost_limit_usd,omitempty"`
	// TokenLimit caps the mission's input plus output tokens (0: none), like CostLimitUSD.
	TokenLimit int64 `json:"token_limit,omitempty"`
	// DependsOn lists hard dependencies: mission ids (or, in Dispatch, client keys).
	DependsOn []string `json:"depends_on,omitempty"`
	VoyageID  string   `json:"voyage_id,omitempty"`

	// Set by the engine and the scheduler, not by tool callers.
	ParentID  string             `json:"-"`
	Kind      domain.MissionKind `json:"-"`
	SubjectID string             `json:"-"`

	// titleStored: Title is the mission's stored title, which an update leaves as it is. It
	// is not checked against today's rule for titles again: a title stored before the rule
	// refused a character (issue 28) is kept, shown escaped, and does not stop other changes.
	titleStored bool
}

// DerivedTitle is the title of a mission the scheduler makes about another (a review, a
// repair, a debugger): prefix and the other's title, cut to MaxTitleLen characters with "…".
// The other's title is taken as it is shown (domain.Shown), so that one stored before the
// rule for titles refused a character still gives a title the rule accepts.
func DerivedTitle(prefix, title string) string {
	r := []rune(prefix + domain.Shown(title))
	if len(r) > MaxTitleLen {
		return string(r[:MaxTitleLen-1]) + "…"
	}
	return string(r)
}

// normalise checks s field by field (field names are prefixed with path, e.g.
// "missions[2].") and fills defaults. now is used to reject deadlines in the past.
func (s *MissionSpec) normalise(path string, now time.Time) error {
	s.Title = strings.TrimSpace(s.Title)
	if s.Title == "" {
		return domain.Invalid(path+"title", "is empty", "give the mission a short title")
	}
	if !s.titleStored {
		if err := checkTitle(path+"title", s.Title); err != nil {
			return err
		}
	}
	if n := utf8.RuneCountInString(s.Title); n > MaxTitleLen {
		return domain.Invalid(path+"title", fmt.Sprintf("is %d characters, more than %d", n, MaxTitleLen), "put details in brief")
	}
	if len(s.Brief) > MaxBriefBytes {
		return domain.Invalid(path+"brief", fmt.Sprintf("is %d bytes, more than %d", len(s.Brief), MaxBriefBytes), "split the work into several missions")
	}
	if p := textProblem(s.Brief, true); p != "" {
		return domain.Invalid(path+"brief", p, "remove it: terminal escapes and bells are not mission text")
	}
	if s.Brief == "" {
		s.Brief = s.Title
	}
	if s.Priority == 0 {
		s.Priority = DefaultPriority
	}
	if err := CheckPriority(path+"priority", s.Priority); err != nil {
		return err
	}
	if s.TargetBranch != "" {
		// refused here, before any git process sees it, rather than when an attempt starts
		// (which spent the attempt and failed the mission) (bug case B32)
		if err := worktree.ValidateBranchName(s.TargetBranch); err != nil {
			return domain.Invalid(path+"target_branch", err.Error(), "give a short branch name such as main or feature/x, or none for the repository's checked-out branch")
		}
	}
	if s.IdempotencyKey != "" && !keyPattern.MatchString(s.IdempotencyKey) {
		return domain.Invalid(path+"idempotency_key", "must be 1-64 characters of A-Z a-z 0-9 _ . : -", "")
	}
	if s.Persona != "" && !namePattern.MatchString(s.Persona) {
		return domain.Invalid(path+"persona", fmt.Sprintf("%q is not a persona name", domain.Clip(s.Persona, 40)), "use lower-case letters, digits, _ and -, e.g. implementer, reviewer")
	}
	if err := checkNames(path+"capabilities", s.Capabilities); err != nil {
		return err
	}
	if err := checkWriteArea(path+"write_area", s.WriteArea); err != nil {
		return err
	}
	if err := s.normaliseChoices(path); err != nil {
		return err
	}
	if err := checkCriteria(path+"acceptance_criteria", s.AcceptanceCriteria); err != nil {
		return err
	}
	if !s.Deadline.IsZero() && !s.Deadline.After(now) {
		return domain.Invalid(path+"deadline", "is in the past", "give an RFC 3339 time in the future, or none")
	}
	if s.RetryBudget == nil {
		b := DefaultBudget
		s.RetryBudget = &b
	}
	if *s.RetryBudget < 0 || *s.RetryBudget > MaxRetryBudget {
		return domain.Invalid(path+"retry_budget", fmt.Sprintf("%d is out of range", *s.RetryBudget), fmt.Sprintf("use 0 to %d; the default is %d", MaxRetryBudget, DefaultBudget))
	}
	if s.CostLimitUSD < 0 {
		return domain.Invalid(path+"cost_limit_usd", "is negative", "use 0 for no limit")
	}
	if s.TokenLimit < 0 {
		return domain.Invalid(path+"token_limit", "is negative", "use 0 for no limit")
	}
	if s.Kind == "" {
		s.Kind = domain.KindWork
	}
	return nil
}

func (s *MissionSpec) normaliseChoices(path string) error {
	switch s.Workspace {
	case "":
		s.Workspace = WorkspaceWorktree
	case WorkspaceWorktree, WorkspaceSnapshot, WorkspaceMain, WorkspaceIsolatedCopy:
	default:
		return domain.Invalid(path+"workspace", fmt.Sprintf("%q is not a workspace strategy", domain.Clip(s.Workspace, 40)), "use worktree, snapshot, main or isolated_copy")
	}
	switch s.Review {
	case "":
		s.Review = ReviewNone
	case ReviewNone, ReviewRequired:
	default:
		return domain.Invalid(path+"review", fmt.Sprintf("%q is not a review policy", domain.Clip(s.Review, 40)), "use none or required")
	}
	return validateModelPolicy(&s.ModelPolicy, path+"model_policy")
}

// validateModelPolicy checks p and fills in its mode from its fields when none is given.
func validateModelPolicy(p *domain.ModelPolicy, field string) error {
	switch p.Mode {
	case "":
		if p.Model != "" {
			p.Mode = domain.ModeSchedulerForced
		} else if len(p.Allowed) > 0 {
			p.Mode = domain.ModeAgentSelect
		}
	case domain.ModeSchedulerForced:
		if p.Model == "" {
			return domain.Invalid(field+".model", "is empty", "scheduler_forced needs the model to run")
		}
	case domain.ModeAgentSelect:
	default:
		return domain.Invalid(field+".mode", fmt.Sprintf("%q is not a model policy", domain.Clip(p.Mode, 40)), "use scheduler_forced or agent_select")
	}
	if len(p.Allowed) > MaxListItems {
		return domain.Invalid(field+".allowed", fmt.Sprintf("has %d entries", len(p.Allowed)), fmt.Sprintf("name at most %d models", MaxListItems))
	}
	if p.Model != "" {
		if err := agent.CheckModel(p.Model); err != nil {
			return domain.Invalid(field+".model", err.Error(), "")
		}
	}
	for i, m := range p.Allowed {
		if err := agent.CheckModel(m); err != nil {
			return domain.Invalid(fmt.Sprintf("%s.allowed[%d]", field, i), err.Error(), "")
		}
	}
	return nil
}

func checkNames(field string, names []string) error {
	if len(names) > MaxListItems {
		return domain.Invalid(field, fmt.Sprintf("has %d entries", len(names)), fmt.Sprintf("give at most %d", MaxListItems))
	}
	for i, n := range names {
		if !namePattern.MatchString(n) {
			return domain.Invalid(fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("%q is not a name", domain.Clip(n, 40)), "use lower-case letters, digits, _ and -, starting with a letter")
		}
	}
	return nil
}

// checkWriteArea validates glob patterns relative to the repository root (doublestar syntax).
func checkWriteArea(field string, patterns []string) error {
	if len(patterns) > MaxListItems {
		return domain.Invalid(field, fmt.Sprintf("has %d patterns", len(patterns)), fmt.Sprintf("give at most %d", MaxListItems))
	}
	for i, p := range patterns {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case p == "" || len(p) > maxPatternLength || hasControl(p, false):
			return domain.Invalid(f, "is empty or too long", "give a glob such as internal/auth/**")
		case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "-"):
			return domain.Invalid(f, fmt.Sprintf("%q must be relative to the repository root", domain.Clip(p, 60)), "drop the leading / or -")
		case slices.Contains(strings.Split(p, "/"), ".."):
			return domain.Invalid(f, fmt.Sprintf("%q leaves the repository", domain.Clip(p, 60)), "remove .. components")
		case !doublestar.ValidatePattern(p):
			return domain.Invalid(f, fmt.Sprintf("%q is not a valid glob", domain.Clip(p, 60)), "use doublestar syntax: *, **, ?, [abc], {a,b}")
		}
	}
	return nil
}

func checkCriteria(field string, items []string) error {
	if len(items) > MaxListItems {
		return domain.Invalid(field, fmt.Sprintf("has %d entries", len(items)), fmt.Sprintf("give at most %d", MaxListItems))
	}
	for i, c := range items {
		if len(c) > maxCriterionLen || !utf8.ValidString(c) {
			return domain.Invalid(fmt.Sprintf("%s[%d]", field, i), "is too long or not UTF-8", fmt.Sprintf("at most %d bytes each", maxCriterionLen))
		}
	}
	return nil
}
