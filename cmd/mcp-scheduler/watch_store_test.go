package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// watch on a mistyped data dir refuses as a usage mistake (exit 2), naming the dir and what
// to check, and creates nothing: neither the dir nor a store in it.
func TestWatch_RefusesADataDirWithoutAStore(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	typo := filepath.Join(s.home, "stat") // the data dir is .../state
	for _, args := range [][]string{{"--data-dir", typo, "watch", "--once"}, {"--data-dir", typo, "watch", "--once", "--json"}} {
		cmd := exec.Command(binary, args...)
		var stdout, stderr bytes.Buffer
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.repo, s.env, &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%v", err)
		require.Equal(t, 2, exit.ExitCode(), stderr.String())
		require.Contains(t, stderr.String(), "no scheduler store at "+typo+": check --data-dir / "+EnvDataDir)
		require.Empty(t, stdout.String())
		_, err = os.Stat(typo)
		require.ErrorIs(t, err, fs.ErrNotExist, "nothing created")
	}
}

// A store removed while watch shows it (the demo removes its data dir at its end) is said on
// the screen, not shown as its last snapshot in silence.
func TestWatch_SaysWhenTheStoreIsRemoved(t *testing.T) {
	w := newWatchSandbox(t)
	cmd := exec.Command(binary, "watch", "--interval", "1s")
	cmd.Dir, cmd.Env = w.repo, append(append([]string{}, w.env...), "TERM=xterm-256color")
	term := startInTerminal(t, cmd, 220, 30)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		term.close()
	}()
	term.waitScreen("the empty data dir", "VOYAGES (0)", "q quit")
	w.stopDaemon()
	require.NoError(t, os.RemoveAll(w.dataDir))
	term.waitScreen("the removed store said", "the scheduler store at "+w.dataDir+" was removed while watching")
	term.press("q")
	require.NoError(t, <-exited, "q exits 0")

	// a watch started after it is refused, as on a mistyped data dir
	out, errs, code := w.cli("watch", "--once")
	require.Equal(t, 2, code, "a data dir without a store is refused: %s%s", out, errs)
}
