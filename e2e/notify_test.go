package e2e_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
)

// TestNotify_DaemonDeliversAcrossAKill: the real daemon, configured with a signed webhook on
// loopback and a command, sends an escalation to both; the webhook answers 500 until told
// otherwise, so its notice is retried (doctor warns); the daemon is SIGKILLed, another
// escalation is opened while none runs, and the next daemon delivers both to the webhook,
// signed, with nothing lost and the command not sent anything twice.
func TestNotify_DaemonDeliversAcrossAKill(t *testing.T) {
	const secret = "e2e-hook-secret"
	var healthy atomic.Bool
	var mu sync.Mutex
	var delivered []map[string]any
	attempts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if r.Header.Get("X-Mcp-Scheduler-Signature-256") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if !healthy.Load() {
			http.Error(w, "receiver starting", http.StatusInternalServerError)
			return
		}
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			delivered = append(delivered, m)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	script, out := filepath.Join(dir, "append.sh"), filepath.Join(dir, "received.ndjson")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n{ cat; printf '\\n'; } >> \"$1\"\n"), 0o755))
	extra := fmt.Sprintf("\n[[notify]]\nname = \"hook\"\nwebhook = %q\nsecret_env = \"E2E_HOOK_SECRET\"\n"+
		"\n[[notify]]\nname = \"desk\"\ncommand = [%q, %q]\nevents = [\"escalation.opened\"]\n"+
		"\n[notifications]\nretry_initial = \"200ms\"\nretry_max = \"1s\"\ngive_up_after = \"10m\"\n", srv.URL+"/hook", script, out)
	e := newXEnv(t, xsettings{Extra: extra})
	e.env = append(e.env, "E2E_HOOK_SECRET="+secret)

	a := e.daemon("daemon-1")
	e.waitUntil("the daemon leads", func() bool { return leaderPID(e.leader().Owner) == a.pid() })
	eng := e.engine()
	escalate := func(reason string) domain.Escalation {
		c, err := eng.CreateMission(e.ctx, engine.MissionSpec{Title: reason, WriteArea: []string{reason + "/**"}}, "test")
		require.NoError(t, err)
		esc, err := eng.Escalate(e.ctx, engine.EscalationSpec{MissionIDs: []string{c.Mission.ID}, Route: domain.RoutePerson,
			Kind: "question", Reason: reason, DecisionRequired: "answer"}, "test")
		require.NoError(t, err)
		return esc
	}
	first := escalate("first")
	lines := func() []string {
		b, _ := os.ReadFile(out)
		if len(b) == 0 {
			return nil
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	e.waitUntil("the command got the escalation and the webhook was tried twice", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(lines()) == 1 && attempts >= 2
	})
	require.Contains(t, lines()[0], first.ID)
	doctor := e.start("doctor", "--json", "doctor")
	<-doctor.done
	require.Contains(t, doctor.logText(), "being retried", "doctor says a notification is failing")

	a.kill()
	second := escalate("second")
	healthy.Store(true)
	b := e.daemon("daemon-2")
	e.waitUntil("both escalations reached the webhook", func() bool {
		mu.Lock()
		defer mu.Unlock()
		got := map[any]bool{}
		for _, m := range delivered {
			got[m["escalation_id"]] = true
		}
		return got[first.ID] && got[second.ID]
	})
	e.waitUntil("the command got the second", func() bool { return len(lines()) == 2 })
	require.Contains(t, lines()[1], second.ID)
	require.NoError(t, b.stop())
	require.Len(t, lines(), 2, "the command was not sent the first escalation twice")
}
