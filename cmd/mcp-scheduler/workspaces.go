package main

import "github.com/mcp-scheduler/mcp-scheduler/tools"

// workspaces returns the workspace service for claim_mission and get_mission_diff. The
// worktree package (worktree.Manager) is not on main yet: until it is, this returns nil and
// those two tools answer with a server error saying workspaces are not configured.
func (a *app) workspaces() tools.Workspaces { return nil }
