// Package pgtest gives tests a real PostgreSQL database: the server named by
// MCP_SCHEDULER_TEST_DATABASE_URL, or a throwaway cluster this package starts with Debian's
// PostgreSQL binaries (initdb, pg_ctl). Each test gets a fresh database, dropped afterwards.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// EnvURL names the variable holding an existing server's URL (any database on it; the helper
// creates and drops its own databases there).
const EnvURL = "MCP_SCHEDULER_TEST_DATABASE_URL"

// binDirs are where Debian and upstream packages put initdb and pg_ctl, newest first.
var binDirs = []string{"/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/14/bin"}

// ErrNoServer: no URL was given and no PostgreSQL binaries were found. Install Debian's
// "postgresql" package or set MCP_SCHEDULER_TEST_DATABASE_URL.
var ErrNoServer = errors.New(`pgtest: no PostgreSQL: set ` + EnvURL + ` or install the "postgresql" package (initdb and pg_ctl under /usr/lib/postgresql/N/bin)`)

// Cluster is a throwaway PostgreSQL cluster in a temporary directory, listening on 127.0.0.1.
type Cluster struct {
	dir  string // data and socket directory, owned by the server's user
	bin  string // directory holding initdb, pg_ctl
	user string // OS user running the server ("" = this process's user)
	port int
	opt  ClusterOptions
}

// ClusterOptions shape a cluster. The zero value trusts every connection.
type ClusterOptions struct {
	// Password, when set, is the superuser postgres's password, and every connection must
	// give it (scram-sha-256); "" trusts every loopback connection (no password).
	Password string
}

// findBin returns the first directory holding both initdb and pg_ctl, or "".
func findBin() string {
	for _, d := range binDirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// StartCluster runs initdb into a new temporary directory and starts the server on a free
// loopback port. As root (initdb refuses root) it runs both as the "postgres" user via runuser.
// Errors: ErrNoServer when the binaries are missing; otherwise the failing command's output.
func StartCluster(ctx context.Context) (*Cluster, error) {
	return StartClusterWith(ctx, ClusterOptions{})
}

// StartClusterWith is StartCluster with options (a password to require).
func StartClusterWith(ctx context.Context, opt ClusterOptions) (*Cluster, error) {
	bin := findBin()
	if bin == "" {
		return nil, ErrNoServer
	}
	c := &Cluster{bin: bin, opt: opt}
	if os.Geteuid() == 0 {
		c.user = "postgres"
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c.dir = dir
	if err := c.chown(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := c.initAndStart(ctx); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) initAndStart(ctx context.Context) error {
	args := []string{"-D", filepath.Join(c.dir, "data"), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"}
	if c.opt.Password != "" {
		pw := filepath.Join(c.dir, "pwfile")
		if err := os.WriteFile(pw, []byte(c.opt.Password+"\n"), 0o644); err != nil { // in the 0700 directory
			return fmt.Errorf("pgtest: %w", err)
		}
		args = append(args[:4], "--auth=scram-sha-256", "--pwfile="+pw, "--no-sync", "-E", "UTF8", "--locale=C")
	}
	if err := c.run(ctx, "initdb", args...); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	c.port = port
	return c.Resume(ctx)
}

// Halt stops the server (fast mode: connections are cut) and keeps its data, for a test of
// a server that goes away; Resume starts it again.
func (c *Cluster) Halt(ctx context.Context) error {
	return c.run(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "fast", "-w", "stop")
}

// Resume starts the (halted) server on its port and waits until it accepts connections.
func (c *Cluster) Resume(ctx context.Context) error {
	opts := fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", c.port, c.dir)
	return c.run(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-l", filepath.Join(c.dir, "log"), "-w", "-t", "120", "-o", opts, "start")
}

// URL is the cluster's connection URL for database db (superuser "postgres", with the
// cluster's password if it has one).
func (c *Cluster) URL(db string) string {
	return c.URLWithPassword(db, c.opt.Password)
}

// URLWithPassword is URL with the given password ("" for none), to try a wrong one.
func (c *Cluster) URLWithPassword(db, password string) string {
	user := "postgres"
	if password != "" {
		user = url.UserPassword("postgres", password).String()
	}
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", user, c.port, db)
}

// Addr is the server's loopback host:port.
func (c *Cluster) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)) }

// Stop shuts the server down (fast mode) and removes its directory. A halted server is only
// removed.
func (c *Cluster) Stop(ctx context.Context) error {
	err := c.Halt(ctx)
	if err != nil && !c.running(ctx) {
		err = nil
	}
	if rmErr := os.RemoveAll(c.dir); err == nil {
		err = rmErr
	}
	return err
}

// running reports whether pg_ctl status finds the server up.
func (c *Cluster) running(ctx context.Context) bool {
	return c.run(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "status") == nil
}

// chown hands the directory to the server's user when running as root.
func (c *Cluster) chown() error {
	if c.user == "" {
		return nil
	}
	out, err := exec.Command("chown", c.user, c.dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: chown %s %s: %w: %s", c.user, c.dir, err, out)
	}
	return nil
}

// run runs one of the cluster's binaries, as c.user when set.
func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	argv := append([]string{filepath.Join(c.bin, name)}, args...)
	if c.user != "" {
		argv = append([]string{"runuser", "-u", c.user, "--"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: %s: %w: %s", strings.Join(argv, " "), err, out)
	}
	return nil
}

// freePort asks the kernel for a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: free port: %w", err)
	}
	defer l.Close()
	_, p, err := net.SplitHostPort(l.Addr().String())
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(p)
}
