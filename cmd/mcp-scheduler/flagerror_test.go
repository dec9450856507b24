package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A flag value of the wrong type is a usage mistake told in CLI words, not the Go parser's.
func TestCLI_FlagValueOfTheWrongType(t *testing.T) {
	s := newSandbox(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"go", "x", "--cost-limit-usd", "abc"}, `--cost-limit-usd: "abc" is not a number (see --help)`},
		{[]string{"go", "x", "--priority", "high"}, `--priority: "high" is not a whole number (see --help)`},
	} {
		_, errs, code := s.cli(c.args...)
		want := c.want
		require.Equal(t, 2, code, errs)
		require.Contains(t, errs, want)
		require.NotContains(t, errs, "strconv")
	}
}
