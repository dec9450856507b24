package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// pprofAddr is where the soaked server serves its profiles (loopback; port fixed per run).
const pprofAddr = "127.0.0.1:0"

// soak is one run: the server process, its MCP client and the counters.
type soak struct {
	o       options
	root    string
	cmd     *exec.Cmd
	c       *client.Client
	created atomic.Int64
	failed  atomic.Int64
	pprof   string // the server's pprof address, once known
}

func run(ctx context.Context, o options) error {
	root, err := os.MkdirTemp("", "mcp-scheduler-soak-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "soak: keeping", root)
	} else {
		defer os.RemoveAll(root)
	}
	s := &soak{o: o, root: root}
	if err := s.prepare(ctx); err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	defer s.c.Close() // the server stops when its stdin closes
	return s.churn(ctx)
}

// prepare builds the binary when needed and makes the repository and the configuration.
func (s *soak) prepare(ctx context.Context) error {
	if s.o.bin == "" {
		s.o.bin = filepath.Join(s.root, "mcp-scheduler")
		b := exec.CommandContext(ctx, "go", "build", "-o", s.o.bin, "./cmd/mcp-scheduler")
		b.Stdout, b.Stderr = os.Stderr, os.Stderr
		if err := b.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/mcp-scheduler (run soak from the module root, or give --bin): %w", err)
		}
	}
	repo := filepath.Join(s.root, "repo")
	for _, args := range [][]string{{"init", "-q", "-b", "main", repo}, {"-C", repo, "commit", "-q", "--allow-empty", "-m", "start"}} {
		if out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	retention := ""
	if s.o.retention != "" {
		retention = fmt.Sprintf("\n[retention]\nmax_age = %q\n", s.o.retention)
	}
	cfg := fmt.Sprintf(`data_dir = %q
[resources]
max_load_per_cpu = 0.0
min_free_memory_mb = 0
min_free_disk_mb = 0
[[profiles]]
name = "reference"
runtime = "ndjson"
command = ["{mcp_scheduler}", "reference-agent"]
env = ["PATH", "HOME"]
max_concurrency = 4
%s`, filepath.Join(s.root, "data"), retention)
	return os.WriteFile(filepath.Join(s.root, "config.toml"), []byte(cfg), 0o600)
}

// start runs `serve` over stdio (stderr to serve.log) and initialises the client.
func (s *soak) start(ctx context.Context) error {
	logf, err := os.Create(filepath.Join(s.root, "serve.log"))
	if err != nil {
		return err
	}
	env := append(os.Environ(), "MCP_SCHEDULER_CONFIG="+filepath.Join(s.root, "config.toml"),
		"GIT_AUTHOR_NAME=soak", "GIT_AUTHOR_EMAIL=soak@localhost", "GIT_COMMITTER_NAME=soak", "GIT_COMMITTER_EMAIL=soak@localhost")
	args := []string{"serve"}
	if s.o.pprof {
		args = append(args, "--pprof", pprofAddr)
	}
	tr := transport.NewStdioWithOptions(s.o.bin, env, args, transport.WithCommandFunc(
		func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env, cmd.Dir, cmd.Stderr = env, filepath.Join(s.root, "repo"), logf
			s.cmd = cmd
			return cmd, nil
		}))
	s.c = client.NewClient(tr)
	if err := s.c.Start(ctx); err != nil {
		return fmt.Errorf("start serve: %w", err)
	}
	var ir mcp.InitializeRequest
	ir.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	ir.Params.ClientInfo = mcp.Implementation{Name: "soak", Version: "0"}
	if _, err := s.c.Initialize(ctx, ir); err != nil {
		return fmt.Errorf("initialize: %w (server log: %s)", err, filepath.Join(s.root, "serve.log"))
	}
	return nil
}

// churn creates missions at the rate and samples until the duration is over.
func (s *soak) churn(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.duration)
	defer cancel()
	create := time.NewTicker(time.Minute / time.Duration(s.o.rate))
	defer create.Stop()
	sample := time.NewTicker(s.o.sample)
	defer sample.Stop()
	start := time.Now()
	fmt.Printf("soak: pid %d, %d missions/min for %v, sample every %v\n", s.cmd.Process.Pid, s.o.rate, s.o.duration, s.o.sample)
	fmt.Println("elapsed\trss_mb\tanon_mb\tfile_mb\tgo_sys_mb\tgo_heap_mb\tthreads\tfds\tcreated\tcompleted\tother\tfailed_calls")
	var samples []sampleRow
	samples = append(samples, s.sample(ctx, start))
	for {
		select {
		case <-ctx.Done():
			samples = append(samples, s.sample(context.Background(), start))
			summarize(samples)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil
			}
			return ctx.Err()
		case <-create.C:
			go s.createOne(ctx)
		case <-sample.C:
			samples = append(samples, s.sample(ctx, start))
		}
	}
}

func (s *soak) createOne(ctx context.Context) {
	n := s.created.Add(1)
	path := fmt.Sprintf("soak/%06d.txt", n)
	brief := fmt.Sprintf("@write %s \"mission %d\"\n@commit soak %d\n@done wrote %s", path, n, n, path)
	_, err := s.call(ctx, "create_mission", map[string]any{"title": fmt.Sprintf("soak %d", n), "brief": brief, "write_area": []string{path}})
	if err != nil && ctx.Err() == nil {
		s.failed.Add(1)
		fmt.Fprintf(os.Stderr, "soak: create_mission %d: %v\n", n, err)
	}
}

// call runs a tool and returns its structured result.
func (s *soak) call(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, fmt.Errorf("%s: %v", name, res.Content)
	}
	return b, nil
}

// sampleRow is one line of the table.
type sampleRow struct {
	at        time.Duration
	rssKB     int64
	completed int
}

func (s *soak) sample(ctx context.Context, start time.Time) sampleRow {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	pid := s.cmd.Process.Pid
	m := procStatus(pid)
	fds := countDir(fmt.Sprintf("/proc/%d/fd", pid))
	var st struct {
		Counts map[string]int `json:"counts"`
	}
	if b, err := s.call(ctx, "status", map[string]any{}); err == nil {
		_ = json.Unmarshal(b, &st)
	}
	other := 0
	for k, v := range st.Counts {
		if k != "completed" {
			other += v
		}
	}
	at := time.Since(start).Truncate(time.Second)
	goSys, goHeap := goMem(s.profile(ctx, "heap?debug=1"))
	mb := func(kb int64) float64 { return float64(kb) / 1024 }
	fmt.Printf("%v\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%d\t%d\t%d\t%d\n", at, mb(m.rss), mb(m.anon), mb(m.file),
		mb(goSys/1024), mb(goHeap/1024), m.threads, fds, s.created.Load(), st.Counts["completed"], other, s.failed.Load())
	s.saveHeap(ctx, at)
	return sampleRow{at: at, rssKB: m.rss, completed: st.Counts["completed"]}
}

// profile fetches /debug/pprof/<name> from the server (nil when it cannot).
func (s *soak) profile(ctx context.Context, name string) []byte {
	if s.pprof == "" {
		s.pprof = pprofFromLog(filepath.Join(s.root, "serve.log"))
	}
	if s.pprof == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.pprof+"/debug/pprof/"+name, nil)
	if err != nil {
		return nil
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: profile:", err)
		return nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil
	}
	return b
}

// saveHeap writes the server's heap profile to --profiles/heap-<elapsed>.pb.gz.
func (s *soak) saveHeap(ctx context.Context, at time.Duration) {
	if s.o.profiles == "" {
		return
	}
	b := s.profile(ctx, "heap?gc=1")
	if b == nil {
		return
	}
	if err := os.MkdirAll(s.o.profiles, 0o700); err != nil {
		return
	}
	_ = os.WriteFile(filepath.Join(s.o.profiles, fmt.Sprintf("heap-%05d.pb.gz", int(at.Seconds()))), b, 0o600)
}

func summarize(rows []sampleRow) {
	if len(rows) < 3 {
		return
	}
	warm := rows[len(rows)/3] // after the first third
	last := rows[len(rows)-1]
	missions := last.completed - warm.completed
	if missions <= 0 {
		fmt.Printf("soak: RSS %.1f MB after warm-up (%v), %.1f MB at the end (%v)\n", float64(warm.rssKB)/1024, warm.at, float64(last.rssKB)/1024, last.at)
		return
	}
	per := float64(last.rssKB-warm.rssKB) / float64(missions)
	fmt.Printf("soak: after warm-up (%v) RSS %.1f MB, at the end (%v) %.1f MB: %+.1f MB over %d completed missions (%+.2f KB per mission)\n",
		warm.at, float64(warm.rssKB)/1024, last.at, float64(last.rssKB)/1024, float64(last.rssKB-warm.rssKB)/1024, missions, per)
}
