module github.com/mcp-scheduler/mcp-scheduler

go 1.26.0
