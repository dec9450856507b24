package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// check is one doctor finding.
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Warn marks a finding that does not fail the doctor but holds work back (a short
	// resource, missions waiting for an agent, no loop running).
	Warn bool `json:"warn,omitempty"`
}

// errDoctor is returned when a check failed (exit code 1).
var errDoctor = errors.New("some checks failed")

func newDoctorCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check git, the agent CLIs of each profile, the data dir and the configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			checks := a.doctor(cmd.Context())
			if a.jsonOut {
				if err := writeJSON(a.out, checks); err != nil {
					return err
				}
			} else {
				t := newTable(a.out, "CHECK", "STATUS", "DETAIL")
				t.width = 0
				for _, c := range checks {
					status := "ok"
					switch {
					case !c.OK:
						status = "FAIL"
					case c.Warn:
						status = "WARN"
					}
					t.row(c.Name, status, c.Detail)
				}
				if err := t.flush(); err != nil {
					return err
				}
			}
			for _, c := range checks {
				if !c.OK {
					return errDoctor
				}
			}
			return nil
		},
	}
}

func (a *app) doctor(ctx context.Context) []check {
	var out []check
	add := func(name string, err error, detail string) {
		c := check{Name: name, OK: err == nil, Detail: detail}
		if err != nil {
			c.Detail = err.Error()
		}
		out = append(out, c)
	}
	cfgDetail := "no file at " + defaultConfigPath(a.env) + ": defaults"
	if a.cfg.path != "" {
		cfgDetail = a.cfg.path
	}
	add("configuration", nil, cfgDetail)
	v, err := gitVersion(ctx)
	add("git ≥ 2.38", err, "git "+v)
	add("data dir writable", checkWritable(a.cfg.DataDir), a.cfg.DataDir)
	dry := a.newDryRun()
	defer dry.close()
	out = append(out, a.repositoryChecks(ctx, dry)...)
	err = a.open(ctx)
	var badRepo *repoPathError
	if errors.As(err, &badRepo) { // said on its repository's row: the database is looked at alone
		err = a.storeCheck(ctx)
	}
	add("database", err, a.cfg.Storage.describe(a.cfg.DataDir))
	if a.eng != nil {
		if a.repos.defaultRepo == "" {
			add("default repository", nil, "none: the working directory is not in a git repository, so missions must name a configured one")
		} else {
			out = append(out, a.defaultRepositoryCheck(ctx, dry))
		}
	}
	for _, p := range a.cfg.Profiles {
		p = p.WithDefaults()
		path, err := a.findProgram(p.Command[0])
		add(fmt.Sprintf("profile %s (%s)", p.Name, p.Runtime), err, path)
	}
	if len(a.cfg.Profiles) == 0 {
		add("agent profiles", nil, "none configured: only pull-mode agents (claim_mission) can work")
	}
	out = append(out, a.remoteChecks(ctx)...)
	if name, detail, err := a.tokenCheck(); name != "" {
		add(name, err, detail)
	}
	if a.eng != nil {
		out = append(out, a.holdChecks(ctx)...)
		out = append(out, a.notifyCheck(ctx))
		if c, ok := a.landingLocksCheck(ctx); ok {
			out = append(out, c)
		}
	}
	return out
}

// findProgram resolves a profile's argv[0] like the runner will: {mcp_scheduler} is this
// binary, a name without a slash is looked up in PATH.
func (a *app) findProgram(name string) (string, error) {
	if name == "{mcp_scheduler}" {
		return os.Executable()
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found: install it or set the profile's command", name)
	}
	return p, nil
}

var gitVersionPattern = regexp.MustCompile(`git version (\d+)\.(\d+)`)

// gitVersion checks that git is at least 2.38 (git merge-tree --write-tree).
func gitVersion(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "--version")
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git not found: %w", err)
	}
	s := strings.TrimSpace(string(b))
	m := gitVersionPattern.FindStringSubmatch(s)
	if m == nil {
		return s, fmt.Errorf("cannot read the version of %q", s)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	ver := m[1] + "." + m[2]
	if major < 2 || (major == 2 && minor < 38) {
		return ver, fmt.Errorf("git %s is too old: 2.38 or newer is needed (merge-tree --write-tree)", ver)
	}
	return ver, nil
}

// checkWritable creates the data dir (0700) if needed and writes a file in it.
func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return err
	}
	name := f.Name()
	_ = f.Close()
	if err := os.Remove(name); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is open to other users (mode %v): chmod 700 %s", dir, st.Mode().Perm(), dir)
	}
	return nil
}
