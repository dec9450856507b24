package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzConfig writes arbitrary bytes as the configuration file and loads it with the
// production loadConfig, then validates what loaded. Properties: no panic; a file that does
// not load gives an error that names the file; validate returns nil or an error with a
// message. The seeds are the TOML examples of docs/configuration.md, docs/agents.md and the
// README.
//
//	go test -run '^$' -fuzz '^FuzzConfig$' -fuzztime 10m ./cmd/mcp-scheduler/
func FuzzConfig(f *testing.F) {
	f.Add([]byte("log_level = \"debug\"\n[scheduler]\nlease_ttl = \"90s\"\nretry_budget = 5\n"))
	dir := f.TempDir()
	env := envOf(map[string]string{"HOME": dir})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "config.toml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := loadConfig(path, true, env)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("the error %q does not name the file", err)
			}
			return
		}
		if err := c.validate(); err != nil && strings.TrimSpace(err.Error()) == "" {
			t.Fatal("validate failed without a message")
		}
	})
}
