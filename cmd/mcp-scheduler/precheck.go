package main

import (
	"fmt"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Every command checks the values it was given before it opens the data dir: a mistake on
// the command line creates, migrates and changes nothing (and prints no storage log lines).
// The checks are the engine's own (engine.CheckMissionSpec, MissionFilter.Check,
// domain.CheckID), so the command line and the MCP tools refuse the same values in the same
// words; cliError then names the flag instead of the field.

// firstError returns the first error of errs that is not nil, as a usage mistake (exit 2).
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			if isUsage(err) {
				return err
			}
			return usageError{err}
		}
	}
	return nil
}

// checkLimit refuses a --limit outside 1..max (a usage mistake).
func checkLimit(limit, max int) error {
	if limit < 1 || limit > max {
		return usageError{fmt.Errorf("--limit %d is out of range: use 1 to %d", limit, max)}
	}
	return nil
}

// checkOptionalID checks the form of an id given to a filter flag ("" is no filter).
func checkOptionalID(field, prefix, id string) error {
	if id == "" {
		return nil
	}
	return domain.CheckID(field, prefix, id)
}
