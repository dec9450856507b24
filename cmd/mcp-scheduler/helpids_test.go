package main

import (
	"regexp"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// Every id a command's help shows (its use line, descriptions, examples and flags) has a
// prefix ids really have: `voyages update --help` showed voy_… for vyg_….
func TestCLI_HelpShowsRealIDPrefixes(t *testing.T) {
	t.Parallel()
	prefixes := []string{domain.PrefixMission, domain.PrefixVoyage, domain.PrefixEscalation, domain.PrefixAgent}
	id := regexp.MustCompile(`\b([a-z]{3})_(01|<|…|\.\.\.)`)
	seen := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		texts := []string{c.Use, c.Short, c.Long, c.Example}
		c.Flags().VisitAll(func(f *pflag.Flag) { texts = append(texts, f.Usage) })
		for _, text := range texts {
			for _, m := range id.FindAllStringSubmatch(text, -1) {
				seen++
				require.Contains(t, prefixes, m[1], "%s: %q shows an id prefix ids do not have (they are %v)", c.CommandPath(), m[0], prefixes)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&app{}))
	require.Positive(t, seen, "the help shows ids (the examples of missions update and voyages update): the pattern is broken")
}
