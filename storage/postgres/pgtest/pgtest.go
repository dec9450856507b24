package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// server is the base URL every fresh database is made from; set by Main.
var server string

// skipReason is why tests skip (outside CI, no server found); "" when a server is up.
var skipReason string

// Main is the body of a test package's TestMain: it finds or starts a server, runs the tests
// and stops a cluster it started. With CI=true a missing server fails the package (exit 1).
func Main(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if u := os.Getenv(EnvURL); u != "" {
		server = u
		return m.Run()
	}
	c, err := StartCluster(ctx)
	if err != nil {
		if errors.Is(err, ErrNoServer) && os.Getenv("CI") != "true" {
			skipReason = err.Error()
			return m.Run()
		}
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	server = c.URL("postgres")
	code := m.Run()
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stopCancel()
	if err := c.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Database creates a fresh, empty database for t and returns its URL; it is dropped when t
// ends. Skips t (outside CI only) when Main found no server.
func Database(t testing.TB) string {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	if server == "" {
		t.Fatal("pgtest: Database called without pgtest.Main in TestMain")
	}
	name := "t_" + randomHex(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := admin(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := admin(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	u, err := withDatabase(server, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// admin runs one statement on the server's base database.
func admin(ctx context.Context, stmt string) error {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return fmt.Errorf("pgtest: connect %s: %w", redact(server), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("pgtest: %s: %w", stmt, err)
	}
	return nil
}

// withDatabase returns base with its database path replaced by name.
func withDatabase(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("pgtest: %s is not a URL: %w", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// redact hides a password in a URL for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(hex.EncodeToString(b))
}

// Private starts a cluster of t's own with opt, for a test that stops and starts its server
// (Halt, Resume) or needs a password, and removes it when t ends. Skips t (outside CI only)
// when no PostgreSQL binaries are installed (even with EnvURL set: that server cannot be
// stopped by the test).
func Private(t testing.TB, opt ClusterOptions) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := StartClusterWith(ctx, opt)
	if errors.Is(err, ErrNoServer) && os.Getenv("CI") != "true" {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	return c
}
