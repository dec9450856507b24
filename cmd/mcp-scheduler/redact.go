package main

import "github.com/mcp-scheduler/mcp-scheduler/agent"

// redactor hides the values of the profiles' secret_env variables (API keys, as set in the
// server's environment) from agent logs returned by get_mission_log and mission://{id}/log,
// with the same rule the runner applies to what it records (agent.NewRedactor). nil when
// there is nothing to hide.
func (a *app) redactor() func(string) string {
	var secrets []string
	for _, p := range a.cfg.Profiles {
		env := map[string]string{}
		for _, name := range p.SecretEnv {
			env[name] = a.env(name)
		}
		secrets = append(secrets, agent.SecretValues(p, env)...)
	}
	rd := agent.NewRedactor(secrets)
	if !rd.Active() {
		return nil
	}
	return rd.String
}
