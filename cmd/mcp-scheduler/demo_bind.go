package main

import (
	"errors"
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// demoToken is the bearer token of demo --http: the demo has no --token flag, so it is
// $MCP_SCHEDULER_TOKEN or the configured [http] token_file ("" when neither is set). A
// non-loopback addr without one is refused here, before the demo builds anything, with the
// ways that really exist for this command.
func (a *app) demoToken(addr string) (string, error) {
	token, err := a.token("")
	if err != nil {
		return "", err
	}
	if err := tools.CheckBind(addr, token); errors.Is(err, tools.ErrInsecureBind) {
		return "", usageError{fmt.Errorf("demo --http %s: not a loopback address and no bearer token; set $%s (or [http] token_file in the config file) "+
			"or use --http 127.0.0.1:PORT (demo has no --token flag)", addr, EnvToken)}
	} else if err != nil {
		return "", usageError{err}
	}
	return token, nil
}
