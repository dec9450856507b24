package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
)

// NodeConfig is the [node] section: this scheduler node's name when several scheduler
// processes share one PostgreSQL store (docs/configuration.md, "Several nodes"). With
// PostgreSQL every process is a node of a cluster: it runs its own agents up to its own limits
// and the leader among the nodes does the cluster-wide duties. The name must be stable across
// restarts of the node — the missions it leases record it, and only the node of that name
// re-attaches their agents — and unique in the cluster. With SQLite there is one node (one
// process per data dir leads) and the section must stay empty.
type NodeConfig struct {
	// Name is the node's name (default: the host name and a hash of the data dir).
	Name string `toml:"name"`
}

// validate refuses a bad name, and a name without PostgreSQL.
func (n NodeConfig) validate(s StorageConfig) []error {
	if n.Name == "" {
		return nil
	}
	if s.URL == "" {
		return []error{fmt.Errorf("node.name: %q names a node of a cluster, which needs a shared PostgreSQL store: set [storage] url (or %s), or remove node.name (with SQLite one process per data dir leads)",
			n.Name, EnvDatabaseURL)}
	}
	if err := engine.CheckNodeName(n.Name); err != nil {
		return []error{fmt.Errorf("node.name: %w", err)}
	}
	return nil
}

// nodeName is the scheduler's node name: "" with SQLite (a single node), else node.name or
// the default, the host name and the first 8 hex digits of the SHA-256 of the data dir's
// absolute path (two nodes on one host have two data dirs).
func (c *Config) nodeName() string {
	if c.Storage.URL == "" {
		return ""
	}
	if c.Node.Name != "" {
		return c.Node.Name
	}
	return defaultNodeName(c.DataDir)
}

func defaultNodeName(dataDir string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "node"
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	sum := sha256.Sum256([]byte(abs))
	return nodeSafe(host) + "-" + hex.EncodeToString(sum[:4])
}

// nodeSafe maps the characters a node name may not hold to '-', and keeps it short.
func nodeSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:", r)) {
			return r
		}
		return '-'
	}, s)
	return s[:min(len(s), 80)]
}
