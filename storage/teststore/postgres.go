package teststore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Postgres is the PostgreSQL backend's name (postgres.Open).
const Postgres = "postgres"

// ServerEnv names the PostgreSQL server the "postgres" test store makes its databases on (a
// URL to any database there, as a superuser or a role that may create databases); .ci/test's
// engine-pg stage starts one.
const ServerEnv = "MCP_SCHEDULER_TEST_DATABASE_URL"

// pgName is the database kept for data dir dir: "ts_" and a hash of the path, so that a
// location handed to another process, or opened again, names the same database.
func pgName(dir string) string {
	h := sha256.Sum256([]byte(dir))
	return "ts_" + hex.EncodeToString(h[:10])
}

// pgLocation is the URL of dir's database on the server (a URL that cannot connect, naming
// the variable, when none is set: Open then says what to set).
func pgLocation(dir string) string {
	u, err := url.Parse(os.Getenv(ServerEnv))
	if err != nil || u.Host == "" {
		return "postgres://unset-" + ServerEnv + "/" + pgName(dir)
	}
	u.Path = "/" + pgName(dir)
	return u.String()
}

// admin runs stmt on the server's own database.
func admin(ctx context.Context, stmt string) error {
	server := os.Getenv(ServerEnv)
	if server == "" {
		return fmt.Errorf("teststore: %s=%s needs a PostgreSQL server: set %s to its URL (.ci/test engine-pg starts one)", Env, Postgres, ServerEnv)
	}
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return fmt.Errorf("teststore: connect to %s: %w", ServerEnv, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, stmt)
	return err
}

// pgCreate creates the database loc names unless it exists (another Open made it first).
func pgCreate(ctx context.Context, loc string) error {
	u, err := url.Parse(loc)
	if err != nil {
		return fmt.Errorf("teststore: location %q is not a PostgreSQL URL: %w", loc, err)
	}
	name := u.Path[1:]
	err = admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42P04" || pe.Code == "23505") { // duplicate_database, or a concurrent create
		return nil
	}
	return err
}

// pgDrop drops dir's database, closing what still uses it.
func pgDrop(dir string) error {
	return admin(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{pgName(dir)}.Sanitize()+" WITH (FORCE)")
}
