package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// UnavailableError is what Update and View return while the database cannot be reached: at
// start while OpenPending still connects (Until is when it gives up), or mid-run when the
// server went away (Until zero). It wraps domain.ErrStoreUnavailable, which the MCP tools
// answer as a tool error and the scheduler retries; its message never shows the password.
type UnavailableError struct {
	URL   string    // the database's URL as SafeURL shows it
	Cause string    // why, with any password hidden
	Until time.Time // when the start-up wait ends ([storage] connect_wait); zero mid-run
}

func (e *UnavailableError) Error() string {
	if !e.Until.IsZero() {
		return fmt.Sprintf("the database at %s is not reachable yet: %s; retrying until %s, see [storage] connect_wait",
			e.URL, e.Cause, e.Until.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("the database at %s is not reachable: %s; the scheduler goes on by itself when it is back (call again then)",
		e.URL, e.Cause)
}

// Unwrap makes errors.Is(err, domain.ErrStoreUnavailable) true.
func (e *UnavailableError) Unwrap() error { return domain.ErrStoreUnavailable }

// unreachable reports whether err says the server cannot be reached or went away, rather
// than refusing the statement: no connection could be made (pgconn.ConnectError, a network
// error), the connection ended (EOF), or the server is shutting down or starting up (class
// 08, 57P01–57P03).
func unreachable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// unavailable turns an error that says the server cannot be reached into an
// *UnavailableError for url; other errors, and any error once ctx ended, are returned as
// they are.
func unavailable(ctx context.Context, err error, url string) error {
	if err == nil || ctx.Err() != nil || !unreachable(err) {
		return err
	}
	return &UnavailableError{URL: SafeURL(url), Cause: hidePassword(err.Error(), url)}
}
