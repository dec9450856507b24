package main

import "github.com/mcp-scheduler/mcp-scheduler/tools"

// workspaces returns the workspace service for claim_mission and get_mission_diff: the
// scheduler loop's (worktrees under the data dir). nil when the command runs no loop.
func (a *app) workspaces() tools.Workspaces {
	if a.loop == nil {
		return nil
	}
	return workspaceService{a.loop.s}
}
