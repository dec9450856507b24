package main

import "github.com/mcp-scheduler/mcp-scheduler/tools"

// workspaces returns the workspace service for get_mission_diff: the scheduler loop's
// (worktrees under the data dir). nil when the command runs no loop.
func (a *app) workspaces() tools.Workspaces {
	if a.loop == nil {
		return nil
	}
	return workspaceService{a.loop.s}
}

// pull returns the pull-mode service for claim_mission and complete_mission: the scheduler
// loop's, which makes the claimed attempts' worktrees and checks their work before a
// completion. nil when the command runs no loop.
func (a *app) pull() tools.Pull {
	if a.loop == nil {
		return nil
	}
	return a.loop.s.Pull()
}
