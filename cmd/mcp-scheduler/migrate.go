package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcp-scheduler/mcp-scheduler/storage"
	"github.com/mcp-scheduler/mcp-scheduler/storage/postgres"
)

// migrateResult is what migrate --json prints: where from, where to (password hidden), and
// the rows per table on both sides.
type migrateResult struct {
	From string `json:"from"`
	To   string `json:"to"`
	postgres.ImportReport
	OK bool `json:"ok"`
}

// newMigrateCmd is `mcp-scheduler migrate --to URL [--from FILE]`: it copies a SQLite store
// into an empty PostgreSQL database (docs/configuration.md, "Moving an existing store to
// PostgreSQL").
func newMigrateCmd(a *app) *cobra.Command {
	var to, from string
	cmd := &cobra.Command{
		Use:   "migrate --to postgres://…",
		Short: "Copy the SQLite store into an empty PostgreSQL database (with the scheduler stopped)",
		Long: "migrate copies every table of the SQLite store (--from, default data_dir/mcp-scheduler.db) into the\n" +
			"empty PostgreSQL database at --to in one transaction, then compares the row counts of every table.\n" +
			"Stop serve and daemon first. Afterwards set [storage] url (or " + EnvDatabaseURL + ") to the same URL.",
		Args: cobra.NoArgs,
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if from == "" {
			from = filepath.Join(a.cfg.DataDir, "mcp-scheduler.db")
		}
		if err := checkMigrateFlags(to); err != nil {
			return err
		}
		return a.migrate(cmd, from, to)
	}
	cmd.Flags().StringVar(&to, "to", "", "URL of the empty PostgreSQL database to copy into (postgres://user:pass@host:5432/db)")
	cmd.Flags().StringVar(&from, "from", "", "SQLite store to copy (default data_dir/mcp-scheduler.db)")
	return cmd
}

// checkMigrateFlags refuses a missing or non-postgres --to, without echoing its password.
func checkMigrateFlags(to string) error {
	if to == "" {
		return usageError{errors.New("--to is required: give the URL of an empty PostgreSQL database (postgres://user:pass@host:5432/db)")}
	}
	if errs := (StorageConfig{URL: to}).validate(); len(errs) > 0 {
		return usageError{fmt.Errorf("--to: %q is not a postgres://host/database URL", postgres.SafeURL(to))}
	}
	return nil
}

// migrate runs the copy and prints the counts (also when they differ: the error then says so).
func (a *app) migrate(cmd *cobra.Command, from, to string) error {
	ctx := cmd.Context()
	ex, err := storage.OpenExport(ctx, from)
	var le *storage.LeadingError
	switch {
	case errors.As(err, &le):
		who := leaderWho(le.Owner)
		return fmt.Errorf("the SQLite store %s is in use: a scheduler leads it (%s); stop serve/daemon (%s) first, then run migrate again", from, who, who)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("there is no SQLite store at %s: give --from the mcp-scheduler.db of the data dir to copy (or --data-dir)", from)
	case err != nil:
		return err
	}
	defer func() { _ = ex.Close() }()
	a.log.Info("copying the SQLite store to PostgreSQL", "from", from, "to", postgres.SafeURL(to))
	rep, err := postgres.ImportSQLite(ctx, ex.DB, to, a.log.With("component", "storage"))
	res := migrateResult{From: from, To: postgres.SafeURL(to), ImportReport: rep, OK: err == nil}
	if len(rep.Tables) > 0 {
		if perr := a.printMigrate(res); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// printMigrate prints the counts per table (or the JSON form) and, on success, what to do next.
func (a *app) printMigrate(res migrateResult) error {
	if a.jsonOut {
		return writeJSON(a.out, res)
	}
	t := newTable(a.out, "TABLE", "SQLITE", "POSTGRESQL", "")
	var rows int64
	for _, c := range res.Tables {
		mark := "ok"
		if c.SQLite != c.Postgres {
			mark = "DIFFERS"
		}
		t.row(c.Table, c.SQLite, c.Postgres, mark)
		rows += c.Postgres
	}
	if err := t.flush(); err != nil || !res.OK {
		return err
	}
	_, err := fmt.Fprintf(a.out, "copied %d rows of %d tables (schema %d) to %s\nnow set [storage] url (or %s) to that URL and start the scheduler again\n",
		rows, len(res.Tables), res.SchemaVersion, res.To, EnvDatabaseURL)
	return err
}

// leaderWho names the process leading a store from its lease owner (ownerText).
func leaderWho(owner string) string {
	if owner == "" {
		return "a process holding its leader lock"
	}
	return ownerText(owner)
}
