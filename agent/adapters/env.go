package adapters

import (
	"path/filepath"

	"github.com/mcp-scheduler/mcp-scheduler/agent"
)

// baseEnv returns the child's environment before runtime additions: a copy of req.Env (the
// profile's allow-list plus the mission's variables, built by the runner) with the profile's
// set_env on top. set_env wins over an inherited or mission variable of the same name: it is
// the configuration's explicit, fixed choice. Its values may use placeholders.
func baseEnv(p agent.Profile, req agent.LaunchRequest, ph placeholders) (map[string]string, error) {
	env := make(map[string]string, len(req.Env)+len(p.SetEnv)+8)
	for k, v := range req.Env {
		env[k] = v
	}
	for k, v := range p.SetEnv {
		x, err := ph.expand(p, "set_env "+k, v)
		if err != nil {
			return nil, err
		}
		env[k] = x
	}
	return env, nil
}

// setDefault sets env[k] = v unless the profile or the allow-list already chose a value.
func setDefault(env map[string]string, k, v string) {
	if _, ok := env[k]; !ok {
		env[k] = v
	}
}

// privateHome gives the child a HOME of its own under the profile's state directory unless
// the allow-list passes the server's HOME (or set_env sets one). The CLIs write sessions,
// caches and settings under HOME; without this they would write into the server user's.
func privateHome(env map[string]string, req agent.LaunchRequest) {
	if req.StateDir != "" {
		setDefault(env, "HOME", filepath.Join(req.StateDir, "home"))
	}
}
