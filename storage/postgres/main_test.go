package postgres

import (
	"os"
	"testing"

	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
