package tools

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// mcp-go's stdio reader blocks in a read of the pipe until it closes; the pipes of
		// a finished test are closed, but the goroutine may still be returning.
		goleak.IgnoreTopFunction("github.com/mark3labs/mcp-go/server.(*StdioServer).readNextLine.func1"),
	)
}
