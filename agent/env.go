package agent

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// reservedVarPrefixes are variable names a mission may not set: they change how programs are
// loaded, not what the agent works on.
var reservedVarPrefixes = []string{"LD_", "DYLD_"}

// CheckMissionVar reports whether name may be used as a mission variable: a portable
// environment name ([A-Za-z_][A-Za-z0-9_]*, at most 128 characters) that is not a dynamic
// loader variable (LD_*, DYLD_*). Tools call it when a mission is created, so a caller learns
// at once what BuildEnv would drop.
func CheckMissionVar(name string) error {
	if !envName.MatchString(name) {
		return fmt.Errorf("mission variable %q: use letters, digits and _ (not starting with a digit), at most 128 characters", name)
	}
	for _, p := range reservedVarPrefixes {
		if strings.HasPrefix(strings.ToUpper(name), p) {
			return fmt.Errorf("mission variable %q: %s* variables control the program loader and cannot be set by a mission", name, p)
		}
	}
	return nil
}

// BuildEnv builds a managed agent's environment (design brief §7, bugs.md B33): the profile's
// allow-list (p.Env) copied from parent, then p.SetEnv, then p.SecretEnv copied from parent,
// then the mission's variables, which never replace a name the profile set and are dropped
// when CheckMissionVar refuses them. Nothing else of parent reaches the agent, so the MCP
// client's own variables (CLAUDECODE, ANTHROPIC_BASE_URL, keys) do not leak into children.
//
// parent is in os.Environ form ("NAME=value"). secrets holds the values of the SecretEnv
// variables that were set (non-empty), for redaction (see NewRedactor); they are never to be
// logged or stored.
func BuildEnv(p Profile, parent []string, vars map[string]string) (env map[string]string, secrets []string) {
	from := make(map[string]string, len(parent))
	for _, kv := range parent {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			from[k] = v
		}
	}
	env = make(map[string]string, len(p.Env)+len(p.SetEnv)+len(p.SecretEnv)+len(vars))
	for _, k := range p.Env {
		if v, ok := from[k]; ok {
			env[k] = v
		}
	}
	for k, v := range p.SetEnv {
		env[k] = v
	}
	for _, k := range p.SecretEnv {
		if v, ok := from[k]; ok {
			env[k] = v
			if v != "" {
				secrets = append(secrets, v)
			}
		}
	}
	fromProfile := make(map[string]bool, len(env))
	for k := range env {
		fromProfile[k] = true
	}
	for k, v := range vars {
		if fromProfile[k] || CheckMissionVar(k) != nil {
			continue
		}
		env[k] = v
	}
	return env, secrets
}

// SecretValues returns the non-empty values in env of the variables p.SecretEnv names: what
// a runner redacts when it did not build env itself.
func SecretValues(p Profile, env map[string]string) []string {
	var out []string
	for _, k := range p.SecretEnv {
		if v := env[k]; v != "" {
			out = append(out, v)
		}
	}
	return out
}

// EnvList turns an environment map into os/exec form ("NAME=value"), sorted by name so a
// child's environment is deterministic.
func EnvList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// Redacted replaces every secret value in redacted text.
const Redacted = "[REDACTED]"

// minSecretLen is the shortest value treated as a secret: redacting one- to three-character
// values would garble every log without protecting anything.
const minSecretLen = 4

// Redactor replaces secret values (API keys) in text with Redacted. The zero value and a
// Redactor without secrets leave text unchanged. It is safe for concurrent use.
type Redactor struct {
	r      *strings.Replacer
	secret [][]byte
	maxLen int
}

// NewRedactor returns a Redactor for the given secret values. Values shorter than four bytes
// are ignored; when one secret contains another, the longer one wins.
func NewRedactor(secrets []string) *Redactor {
	vals := slices.Clone(secrets)
	vals = slices.DeleteFunc(vals, func(s string) bool { return len(s) < minSecretLen })
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
	vals = slices.Compact(vals)
	if len(vals) == 0 {
		return &Redactor{}
	}
	pairs := make([]string, 0, 2*len(vals))
	rd := &Redactor{maxLen: len(vals[0])}
	for _, v := range vals {
		pairs = append(pairs, v, Redacted)
		rd.secret = append(rd.secret, []byte(v))
	}
	rd.r = strings.NewReplacer(pairs...)
	return rd
}

// Active reports whether the Redactor has anything to redact.
func (rd *Redactor) Active() bool { return rd != nil && rd.r != nil }

// MaxLen is the length in bytes of the longest secret (0 without secrets): a stream redacted
// chunk by chunk must hold back MaxLen-1 bytes so a secret split between chunks is still
// found.
func (rd *Redactor) MaxLen() int {
	if rd == nil {
		return 0
	}
	return rd.maxLen
}

// String returns s with every secret replaced.
func (rd *Redactor) String(s string) string {
	if !rd.Active() {
		return s
	}
	return rd.r.Replace(s)
}

// Bytes returns b with every secret replaced; b itself is returned (not copied) when it
// holds none.
func (rd *Redactor) Bytes(b []byte) []byte {
	if !rd.Active() || !rd.contains(b) {
		return b
	}
	return []byte(rd.r.Replace(string(b)))
}

func (rd *Redactor) contains(b []byte) bool {
	for _, s := range rd.secret {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}
