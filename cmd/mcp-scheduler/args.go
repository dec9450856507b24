package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// oneArg accepts exactly the one argument the command's Use names ("go TITLE": TITLE) and
// otherwise says which is missing or how many were given, with the usage line — instead of
// cobra's "accepts 1 arg(s), received 0". A usage mistake (exit 2).
func oneArg(cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		return nil
	}
	name := "an argument"
	if f := strings.Fields(cmd.Use); len(f) > 1 {
		name = f[1]
	}
	if len(args) == 0 {
		return usageError{fmt.Errorf("missing %s (usage: %s)", name, cmd.UseLine())}
	}
	return usageError{fmt.Errorf("%d arguments given, want one %s — quote a value with spaces (usage: %s)", len(args), name, cmd.UseLine())}
}
