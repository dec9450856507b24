package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// tokens returns the bearer tokens of serve, daemon and demo --http: the flag, else
// $MCP_SCHEDULER_TOKEN (one token each, named "default", fixed until the next start), else
// the token file ([http] token_file, serve --token-file, $MCP_SCHEDULER_TOKEN_FILE), which
// the listener follows while it runs (docs/configuration.md, "Tokens"). nil when none is
// set; an error naming http.token_file, the file and the line when the file is refused.
func (a *app) tokens(flag string) (*tools.Tokens, error) {
	if flag != "" {
		return tools.FixedToken(flag), nil
	}
	if t := a.env(EnvToken); t != "" {
		return tools.FixedToken(t), nil
	}
	path := a.cfg.HTTP.TokenFile
	if path == "" {
		return nil, nil
	}
	t, err := tools.OpenTokenFile(path, a.log)
	if err != nil {
		return nil, fmt.Errorf("http.token_file: %w", err)
	}
	return t, nil
}

// tokenCheck is doctor's line about the HTTP tokens: how many are configured and their
// names, never their values ("" name when no token is configured).
func (a *app) tokenCheck() (name, detail string, err error) {
	from := "$" + EnvToken
	if a.env(EnvToken) == "" {
		if a.cfg.HTTP.TokenFile == "" {
			return "", "", nil
		}
		from = a.cfg.HTTP.TokenFile
	}
	t, err := a.tokens("")
	if err != nil {
		return "http tokens", "", err
	}
	names := t.Names()
	return "http tokens", fmt.Sprintf("%d from %s: %s", len(names), from, strings.Join(names, ", ")), nil
}

// authenticatedText is missions show's note of the token a pull-mode claim came with
// (" (token alice)"), read from the run record's authenticated_by; "" when there is none.
func authenticatedText(run json.RawMessage) string {
	var rec struct {
		AuthenticatedBy string `json:"authenticated_by"`
	}
	if len(run) == 0 || json.Unmarshal(run, &rec) != nil || rec.AuthenticatedBy == "" {
		return ""
	}
	return " (token " + rec.AuthenticatedBy + ")"
}
