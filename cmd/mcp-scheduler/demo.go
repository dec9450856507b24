package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
	"github.com/mcp-scheduler/mcp-scheduler/agent/refagent"
	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// demoTimeout bounds the demo; it normally ends in a few seconds.
const demoTimeout = 2 * time.Minute

func newDemoCmd(a *app) *cobra.Command {
	var keep bool
	var httpAddr string
	var pace time.Duration
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a sample voyage end to end: a real repository, real worktrees, the bundled reference agent",
		Long: "Create a small sample repository and a private data dir in a temporary directory, start the\n" +
			"scheduler, dispatch a voyage of six missions (dependencies, a write-area conflict, a review and a\n" +
			"flaky mission that is retried), show its progress live and end with the landed history.\n" +
			"Nothing outside the temporary directory is touched; --keep leaves it for a look around.\n" +
			"It takes a few seconds; --pace 2s makes each step of each demo agent wait 2s, to watch the\n" +
			"dashboard's graph or `watch` fill in.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pace < 0 || pace > maxDemoPace {
				return usageError{fmt.Errorf("--pace %v is out of range: give 0 (no waiting) to %v, for example --pace 2s", pace, maxDemoPace)}
			}
			return a.demo(cmd.Context(), keep, httpAddr, pace)
		},
	}
	cmd.Flags().DurationVar(&pace, "pace", 0, "wait this long after each step of each demo agent (progress, write, commit), to watch the voyage fill in; 0: full speed")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the temporary repository and data dir and print where they are")
	cmd.Flags().StringVar(&httpAddr, "http", "", "also serve the web dashboard (and MCP) on this host:port while the demo runs, and keep serving after it ends until interrupted (not loopback: needs $"+EnvToken+" or [http] token_file)")
	return cmd
}

func (a *app) demo(ctx context.Context, keep bool, httpAddr string, pace time.Duration) error {
	start := time.Now()
	var tokens *tools.Tokens
	if httpAddr != "" {
		var err error
		if tokens, err = a.demoToken(httpAddr); err != nil {
			return err
		}
	}
	root, err := os.MkdirTemp("", "mcp-scheduler-demo-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(root)
	}
	repo := filepath.Join(root, "handbook")
	if err := makeSampleRepo(ctx, repo); err != nil {
		return fmt.Errorf("sample repository: %w", err)
	}
	a.demoConfig(filepath.Join(root, "data"), repo)
	if a.logLevelFlag == "" && a.env(EnvLogLevel) == "" {
		a.level.Set(slog.LevelWarn) // the demo prints its own progress; logs only for trouble
	}
	if err := a.open(ctx); err != nil {
		return err
	}
	l, err := a.openLoop(ctx)
	if err != nil {
		return err
	}
	a.recordProfiles(ctx) // its reference profile is an agent the status and the dashboard list
	dashURL := ""
	if httpAddr != "" {
		base, stop, err := a.sideHTTP(ctx, httpAddr, tokens)
		if err != nil {
			return err
		}
		defer stop()
		dashURL = base
	}
	sub := a.eng.Hub().Subscribe()
	defer sub.Close()
	d, err := a.eng.Dispatch(ctx, demoVoyage(pace), "demo")
	if err != nil {
		return err
	}
	p := &demoPrinter{a: a, w: a.out, keys: map[string]string{}, why: map[string]string{}, start: start,
		leading: l.s.Leader, dispatched: len(d.IDs), ids: map[string]bool{}}
	for k, id := range d.IDs {
		p.keys[id], p.ids[id] = k, true
	}
	printShown(a.out, "mcp-scheduler demo: voyage %s, %s, repository %s\n", d.Voyage.ID, missionCount(len(d.IDs), 0, 0), repo)
	if keep {
		printShown(a.out, "--keep: the repository and the data dir stay in %s afterwards\n", root)
	}
	if dashURL != "" {
		printShown(a.out, "Dashboard: %s/#/voyage/%s\n", dashURL, d.Voyage.ID)
	}
	printShown(a.out, "\nWatch it live from another terminal: %s --data-dir %s watch\n\n", selfCommand(), shellQuote(a.cfg.DataDir))
	runCtx, cancel := context.WithTimeout(ctx, demoTimeoutFor(pace))
	defer cancel()
	// With a dashboard the loop runs as long as it is served (until Ctrl-C), so that what a
	// person does there after the voyage (a retry, a resolved escalation) is carried out;
	// without one it ends with the voyage.
	loopCtx := runCtx
	if dashURL != "" {
		loopCtx = ctx
	}
	if err := l.s.Start(loopCtx); err != nil {
		return errors.Join(err, l.s.Stop(context.WithoutCancel(ctx)))
	}
	stopLoop := func() error { return l.s.Stop(context.WithoutCancel(ctx)) }
	state, err := p.follow(runCtx, sub, d.Voyage.ID)
	if err != nil || dashURL == "" {
		if serr := stopLoop(); serr != nil && err == nil {
			err = serr
		}
		stopLoop = func() error { return nil }
	}
	if err != nil {
		return err
	}
	if err := p.summary(ctx, d.Voyage.ID, repo); err != nil {
		return err
	}
	switch {
	case keep:
		printShown(a.out, "\nKept: repository %s, data dir %s\n", repo, filepath.Join(root, "data"))
	case dashURL != "":
		printShown(a.out, "\nThe temporary repository and data dir are removed when you press Ctrl-C; `mcp-scheduler demo --keep` keeps them for a look around.\n")
	default:
		printShown(a.out, "\nThe temporary repository and data dir are now removed; `mcp-scheduler demo --keep` keeps them for a look around.\n")
	}
	if dashURL != "" {
		printShown(a.out, "\nThe dashboard stays up at %s until you press Ctrl-C; the demo's scheduler runs until then too, so a mission retried or an escalation resolved there goes on.\n", dashURL)
		<-ctx.Done()
	}
	if err := stopLoop(); err != nil {
		return err
	}
	if state != domain.VoyageCompleted {
		return fmt.Errorf("the voyage ended %s", state)
	}
	return nil
}

// demoConfig points the app at the demo's own data dir, repository and reference agent, with
// a quick tick and short backoff so the demo takes seconds.
func (a *app) demoConfig(dataDir, repo string) {
	a.cfg.DataDir, a.defaultRepoDir = dataDir, repo
	a.cfg.Repositories = nil
	a.cfg.Scheduler.Tick = agent.Duration(100 * time.Millisecond)
	a.cfg.Scheduler.BackoffInitial = agent.Duration(300 * time.Millisecond)
	a.cfg.Scheduler.BackoffMax = agent.Duration(time.Second)
	a.cfg.Scheduler.MaxConcurrency = 3
	// The resource thresholds stay the defaults: on a busy machine they start fewer agents at
	// once, never none, so the demo shows the gate working rather than turning it off.
	a.cfg.Profiles = []agent.Profile{{Name: "reference", Runtime: agent.RuntimeNDJSON,
		Command: []string{"{mcp_scheduler}", refagent.Subcommand}, Env: []string{"PATH", "HOME"},
		Personas: []string{"implementer", "reviewer"}, MaxConcurrency: 3}}
}

// demoVoyage is a small handbook written by six missions, each agent step waiting pace
// (paced), the reviewer's too (pacedReview).
func demoVoyage(pace time.Duration) engine.VoyageSpec {
	v := demoMissions()
	for i := range v.Missions {
		v.Missions[i].Brief = paced(v.Missions[i].Brief, pace)
		if v.Missions[i].Review == engine.ReviewRequired {
			v.Missions[i].Brief += pacedReview(pace)
		}
	}
	return v
}

// demoMissions is the demo's voyage at full speed.
func demoMissions() engine.VoyageSpec {
	w := func(path, text, msg string) string {
		return fmt.Sprintf("@heartbeat 200ms\n@progress 30 drafting %s\n@sleep 300ms\n@write %s %q\n@progress 80 committing\n@commit %s\n@done %s", path, path, text, msg, msg)
	}
	return engine.VoyageSpec{Title: "Write the handbook", Goal: "A short handbook for the greeter tool", Missions: []engine.MissionSpec{
		{Key: "outline", Title: "Outline the handbook", WriteArea: []string{"docs/outline.md"},
			Brief: "Write the outline.\n" + w("docs/outline.md", "# Outline\n\n1. Getting started\n2. Configuration\n", "outline")},
		{Key: "getting-started", Title: "Chapter: getting started", WriteArea: []string{"docs/getting-started.md"}, DependsOn: []string{"outline"},
			Brief: "Write chapter 1.\n" + w("docs/getting-started.md", "# Getting started\n\nRun `greeter hello`.\n", "getting started")},
		{Key: "configuration", Title: "Chapter: configuration", WriteArea: []string{"docs/configuration.md"}, DependsOn: []string{"outline"},
			Brief: "Write chapter 2 (its first attempt hits a flaky spell checker and is retried).\n@flaky 1 test \"spell checker timed out\"\n" +
				w("docs/configuration.md", "# Configuration\n\nSet GREETER_NAME.\n", "configuration")},
		{Key: "glossary", Title: "Glossary (reviewed)", WriteArea: []string{"docs/glossary.md"}, Review: engine.ReviewRequired,
			Brief: "Write the glossary; a reviewer approves it before it lands.\n" + w("docs/glossary.md", "# Glossary\n\n- greeting: a friendly word\n", "glossary")},
		{Key: "readme-usage", Title: "README: usage section", WriteArea: []string{"README.md"},
			Brief: "Add a usage section to the README.\n@heartbeat 200ms\n@sleep 400ms\n@append README.md \"\\n## Usage\\n\\n    greeter hello\\n\"\n@commit readme usage\n@done usage section"},
		{Key: "readme-links", Title: "README: handbook links", WriteArea: []string{"README.md"}, DependsOn: []string{"getting-started", "configuration"},
			Brief: "Link the chapters from the README (same write area as the usage section: never at the same time).\n@heartbeat 200ms\n@sleep 200ms\n" +
				"@append README.md \"\\n## Handbook\\n\\n- docs/getting-started.md\\n- docs/configuration.md\\n\"\n@commit readme links\n@done links"},
	}}
}

// makeSampleRepo creates the demo's repository: a README and a tiny program, one commit on main.
func makeSampleRepo(ctx context.Context, dir string) error {
	files := map[string]string{
		"README.md": "# greeter\n\nA tiny tool that says hello.\n",
		"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
		"go.mod":    "module example.com/greeter\n\ngo 1.22\n",
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "greeter: first commit"}} {
		if out, err := demoGit(ctx, dir, args...); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, out)
		}
	}
	return nil
}

func demoGit(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=demo", "GIT_AUTHOR_EMAIL=demo@mcp-scheduler.invalid",
		"GIT_COMMITTER_NAME=demo", "GIT_COMMITTER_EMAIL=demo@mcp-scheduler.invalid")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// demoPrinter shows the voyage's events as they happen.
type demoPrinter struct {
	a     *app
	w     interface{ Write([]byte) (int, error) }
	keys  map[string]string // mission id → client key (and derived missions by title)
	why   map[string]string // mission id → the code of the reason it waits for, last printed
	start time.Time
	seq   int64
	// leading reports whether the demo's own scheduler leads yet: until it does, every
	// mission "waits" for a leader (no_leader), which is true for a few milliseconds and
	// misleading, so no reason is printed before.
	leading    func() bool
	dispatched int             // missions of the voyage as dispatched (the scheduler may add reviews)
	ids        map[string]bool // the dispatched missions' ids
}

// demoLabel names a mission the demo did not dispatch: its key, else its title (cut).
func demoLabel(m domain.Mission) string {
	if m.Key != "" {
		return m.Key
	}
	return domain.Clip(m.Title, 24)
}

// missionCount counts a voyage's missions the same way at the start and the end of the demo:
// the dispatched ones, then those the scheduler added (a review of a reviewed mission, a
// mission made about another), then any added from outside the demo (`go --voyage`).
func missionCount(dispatched, added, others int) string {
	s := fmt.Sprintf("%d missions dispatched", dispatched)
	if added > 0 {
		s += fmt.Sprintf(" + %d the scheduler added", added)
	}
	if others > 0 {
		s += fmt.Sprintf(" + %d added from outside the demo", others)
	}
	return s
}

// follow prints events until the voyage settles (completed, blocked, cancelled) or ctx ends.
func (p *demoPrinter) follow(ctx context.Context, sub *engine.Subscription, voyage string) (domain.VoyageState, error) {
	for {
		evs, err := p.a.eng.Events(ctx, engine.EventFilter{AfterSeq: p.seq, Limit: 1000})
		if err != nil {
			return "", err
		}
		for _, e := range evs {
			p.seq = e.Seq
			p.print(ctx, e)
		}
		// Whether the scheduler leads is read before the reasons: once it leads, its leader
		// row is written, so the reasons read after it are the real ones.
		leads := p.leading()
		st, err := p.a.eng.VoyageStatus(ctx, voyage)
		if err != nil {
			return "", err
		}
		if leads {
			p.waiting(ctx, st.Missions)
		}
		switch st.Voyage.State {
		case domain.VoyageCompleted, domain.VoyageBlocked, domain.VoyageCancelled:
			return st.Voyage.State, nil
		}
		if !sub.Wait(ctx, 500*time.Millisecond) && ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return st.Voyage.State, fmt.Errorf("the demo did not finish in time (%s at full speed, more with --pace)", demoTimeout)
			}
			return st.Voyage.State, ctx.Err()
		}
		sub.Take()
	}
}

// waiting prints why a mission waits whenever the kind of reason changes (the same reasons
// get_mission gives: a dependency, a conflict, the busy machine, a concurrency limit …).
func (p *demoPrinter) waiting(ctx context.Context, ms []engine.MissionLine) {
	for _, m := range ms {
		code, msg := "", ""
		if m.State.Runnable() && len(m.Why) > 0 {
			code, msg = m.Why[0].Code, m.Why[0].Message
		}
		if code == p.why[m.ID] {
			continue
		}
		p.why[m.ID] = code
		if code != "" && code != engine.WhyQueued {
			printShown(p.w, "%6.2fs  %-16s waits (%s): %s\n", time.Since(p.start).Seconds(), p.name(ctx, m.ID), code, msg)
		}
	}
}

// print writes one line for the events a person wants to see.
func (p *demoPrinter) print(ctx context.Context, e domain.Event) {
	name := p.name(ctx, e.MissionID)
	line := ""
	switch e.Type {
	case "lease.acquired":
		line = fmt.Sprintf("%-16s started (attempt %d, epoch %d)", name, e.Attempt, e.Epoch)
	case "mission.progress":
		line = fmt.Sprintf("%-16s %s", name, field(e, "message"))
	case "mission.completed":
		line = fmt.Sprintf("%-16s completed: %s", name, field(e, "summary"))
	case "mission.failed":
		line = fmt.Sprintf("%-16s failed (%s): %s", name, field(e, "decision"), field(e, "reason"))
	case "landing.landed":
		line = fmt.Sprintf("%-16s landed on main", name)
	case "landing.state":
		line = fmt.Sprintf("%-16s landing: %s", name, field(e, "reason"))
	case "conflict.added":
		line = fmt.Sprintf("%-16s write-area conflict recorded: %s", name, field(e, "reason"))
	case "mission.created":
		if e.MissionID != "" && p.keys[e.MissionID] == "" {
			line = fmt.Sprintf("%-16s created by the scheduler", name)
		}
	case "voyage.completed", "voyage.blocked":
		line = fmt.Sprintf("voyage %s", strings.TrimPrefix(e.Type, "voyage."))
	}
	if line != "" {
		printShown(p.w, "%6.2fs  %s\n", time.Since(p.start).Seconds(), line)
	}
}

// addedCounts counts the voyage's missions the demo did not dispatch: those the scheduler made
// about another mission (they have a subject: a review, a repair, a debug), and the others.
func (p *demoPrinter) addedCounts(ctx context.Context, ms []engine.MissionLine) (added, others int) {
	for _, m := range ms {
		if p.ids[m.ID] {
			continue
		}
		if d, err := p.a.eng.GetMission(ctx, m.ID); err == nil && d.Mission.SubjectID != "" {
			added++
		} else {
			others++
		}
	}
	return added, others
}

func (p *demoPrinter) name(ctx context.Context, id string) string {
	if id == "" {
		return ""
	}
	if k, ok := p.keys[id]; ok {
		return k
	}
	d, err := p.a.eng.GetMission(ctx, id)
	if err != nil {
		return id
	}
	k := strings.ToLower(string(d.Mission.Kind))
	if s, ok := p.keys[d.Mission.SubjectID]; ok {
		k += " of " + s
	} else if d.Mission.SubjectID == "" {
		k = demoLabel(d.Mission) // not the scheduler's: added from outside the demo
	}
	p.keys[id] = k
	return k
}

func field(e domain.Event, key string) string {
	var m map[string]any
	if jsonUnmarshal(e.Data, &m) != nil {
		return ""
	}
	if v, ok := m[key]; ok && v != nil {
		return fmt.Sprint(v)
	}
	return ""
}

// summary prints the landed history and a table of the missions.
func (p *demoPrinter) summary(ctx context.Context, voyage, repo string) error {
	log, err := demoGit(ctx, repo, "log", "--graph", "--format=%h %s", "main")
	if err != nil {
		return fmt.Errorf("git log: %v: %s", err, log)
	}
	printShown(p.w, "\nLanded history of main:\n%s\n\n", log)
	st, err := p.a.eng.VoyageStatus(ctx, voyage)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(p.w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "MISSION\tKIND\tSTATE\tLANDING\tATTEMPTS")
	attempts := 0
	for _, m := range st.Missions {
		printShown(tw, "%s\t%s\t%s\t%s\t%d\n", p.name(ctx, m.ID), m.Kind, m.State, m.Landing, m.Attempt)
		attempts += m.Attempt
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	added, others := p.addedCounts(ctx, st.Missions)
	printShown(p.w, "\nVoyage %s: %s, %d attempts, %.1fs.\n", st.Voyage.State, missionCount(p.dispatched, added, others), attempts, time.Since(p.start).Seconds())
	return nil
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
