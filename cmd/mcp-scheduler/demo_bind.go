package main

import (
	"errors"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// demoToken is the bearer tokens of demo --http: the demo has no --token flag, so it is
// $MCP_SCHEDULER_TOKEN or the configured [http] token_file (nil when neither is set). A
// non-loopback addr without one is refused here, before the demo builds anything, with the
// ways that really exist for this command.
func (a *app) demoToken(addr string) (*tools.Tokens, error) {
	tokens, err := a.tokens("")
	if err != nil {
		return nil, err
	}
	if err := tools.CheckBind(addr, tokens != nil); errors.Is(err, tools.ErrInsecureBind) {
		return nil, usageError{fmt.Errorf("demo --http %s: not a loopback address and no bearer token; set $%s (or [http] token_file in the config file) "+
			"or use --http 127.0.0.1:PORT (demo has no --token flag)", addr, EnvToken)}
	} else if err != nil {
		return nil, usageError{err}
	}
	return tokens, nil
}
