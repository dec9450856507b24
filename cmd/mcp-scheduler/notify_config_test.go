package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcp-scheduler/mcp-scheduler/engine"
	"github.com/mcp-scheduler/mcp-scheduler/engine/notify"
	"github.com/mcp-scheduler/mcp-scheduler/storage/teststore"
)

// Every [[notify]] problem is named by its key, and reported with the file's other problems
// in one run.
func TestConfig_NotifyErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"[[notify]]\nname = \"x\"":                                                                        "notify[0]: set webhook",
		"[[notify]]\nname = \"ops\\u202e\"\nwebhook = \"http://h/x\"":                                     "notify[0].name: contains U+202E (RIGHT-TO-LEFT OVERRIDE) at character 4: ",
		"[[notify]]\nwebhook = \"ftp://h/x\"":                                                             "notify[0].webhook",
		"[[notify]]\nwebhook = \"http://h/x\"\ncommand = [\"a\"]":                                         "not both",
		"[[notify]]\ncommand = [\" sh\"]":                                                                 "notify[0].command",
		"[[notify]]\ncommand = [\"a\"]\nsecret = \"s\"":                                                   "notify[0].secret: signs webhooks only",
		"[[notify]]\nwebhook = \"http://h/x\"\nsecret = \"s\"\nsecret_env = \"S\"":                        "notify[0].secret_env: set secret or secret_env",
		"[[notify]]\nwebhook = \"http://h/x\"\nsecret_env = \"NOT_SET\"":                                  "the environment variable NOT_SET is not set",
		"[[notify]]\nwebhook = \"http://h/x\"\nevents = [\"mission.done\"]":                               `notify[0].events[0]: "mission.done" is not one of escalation.opened`,
		"[[notify]]\nwebhook = \"http://h/x\"\nvoyages = [\"v1\"]":                                        "notify[0].voyages[0]",
		"[[notify]]\nwebhook = \"http://h/x\"\ntimeout = \"1h\"":                                          "notify[0].timeout",
		"[[notify]]\nwebhook = \"http://h/x\"\nname = \"Bad Name\"":                                       "notify[0].name",
		"[[notify]]\nwebhook = \"http://h/x\"\ncolour = \"red\"":                                          "unknown key notify.colour",
		"[[notify]]\nname = \"a\"\nwebhook = \"http://h/x\"\n[[notify]]\nname = \"a\"\ncommand = [\"b\"]": `notify[1].name: "a" is also notify[0]'s`,
		"[[notify]]\nwebhook = \"http://h/x\"\n[notifications]\nretry_initial = \"0s\"":                   "notifications.retry_initial",
		"[[notify]]\nwebhook = \"http://h/x\"\n[notifications]\ngive_up_after = \"1000h\"":                "notifications.give_up_after",
	}
	for body, want := range cases {
		c, err := loadConfig(writeConfig(t, body), true, envOf(map[string]string{"HOME": "/h"}))
		if err == nil {
			err = c.validate()
		}
		require.ErrorContains(t, err, want, body)
	}
	body := "[scheduler]\nmax_concurrency = 0\n[[notify]]\nwebhook = \"gopher://x\"\n[[notify]]\ncommand = []\n"
	c, err := loadConfig(writeConfig(t, body), true, envOf(map[string]string{"HOME": "/h"}))
	require.NoError(t, err)
	err = c.validate()
	for _, want := range []string{"scheduler.max_concurrency", "notify[0].webhook", "notify[1]: set webhook"} {
		require.ErrorContains(t, err, want)
	}
}

// A valid section gets its defaults (name, timeout) and its secret from the environment.
func TestConfig_NotifySinks(t *testing.T) {
	t.Parallel()
	body := `[[notify]]
webhook = "https://hooks.example.com/scheduler"
secret_env = "HOOK_SECRET"
events = ["escalation.opened", "mission.failed"]

[[notify]]
name = "desktop"
command = ["notify-send", "mcp-scheduler", "{summary}"]
timeout = "3s"
voyages = ["vyg_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"]
`
	c, err := loadConfig(writeConfig(t, body), true, envOf(map[string]string{"HOME": "/h", "HOOK_SECRET": " t0ps3cret\n"}))
	require.NoError(t, err)
	require.NoError(t, c.validate())
	sinks, errs := c.sinks(c.env)
	require.Empty(t, errs)
	require.Equal(t, []notify.Sink{
		{Name: "notify-1", Webhook: "https://hooks.example.com/scheduler", Secret: "t0ps3cret", Timeout: notify.DefaultTimeout,
			Events: []string{notify.TypeEscalationOpened, notify.TypeMissionFailed}},
		{Name: "desktop", Command: []string{"notify-send", "mcp-scheduler", "{summary}"}, Timeout: 3 * time.Second,
			Voyages: []string{"vyg_01JD5Z8Q6X3V4W5Y6Z7A8B9C0D"}},
	}, sinks)
	require.Equal(t, notify.DefaultOptions(), c.Notifications.options())
}

// doctor's notifications check: fine with no sinks, a warning while notices are retried, a
// failure naming the latest given-up ones.
func TestDoctor_NotifyCheck(t *testing.T) {
	t.Parallel()
	st := teststore.New(t)
	a := &app{eng: engine.New(st, engine.Options{})}
	c := a.notifyCheck(t.Context())
	require.True(t, c.OK && !c.Warn, "%+v", c)
	require.Contains(t, c.Detail, "none configured")

	a.cfg.Notify = []NotifyConfig{{Name: "hook", Webhook: "http://127.0.0.1:1/"}}
	now := time.Now().UTC().Truncate(time.Millisecond)
	ns := []engine.Notice{{Sink: "hook", EventSeq: 7, Type: notify.TypeMissionFailed, Body: []byte(`{}`), CreatedAt: now, NextAt: now},
		{Sink: "hook", EventSeq: 8, Type: notify.TypeEscalationOpened, Body: []byte(`{}`), CreatedAt: now, NextAt: now}}
	require.NoError(t, st.Update(t.Context(), func(tx engine.Tx) error { return tx.NoticeEnqueue(t.Context(), 8, ns) }))
	c = a.notifyCheck(t.Context())
	require.True(t, c.OK && !c.Warn, "%+v", c)
	require.Contains(t, c.Detail, "1 sinks; 2 pending, none failing")
	require.Empty(t, a.notifyLine(t.Context()), "status says nothing while nothing fails")

	ns[0].Attempts, ns[0].LastError, ns[0].NextAt = 1, "webhook http://127.0.0.1:1 answered 500", now.Add(time.Minute)
	require.NoError(t, a.eng.NoticeFailed(t.Context(), ns[0]))
	c = a.notifyCheck(t.Context())
	require.True(t, c.OK && c.Warn, "%+v", c)
	require.Contains(t, c.Detail, "1 of 2 pending notifications failed at least once and are being retried")

	ns[1].Attempts, ns[1].LastError, ns[1].GaveUpAt = 9, "webhook http://127.0.0.1:1 answered 404", now
	require.NoError(t, a.eng.NoticeFailed(t.Context(), ns[1]))
	c = a.notifyCheck(t.Context())
	require.False(t, c.OK, "%+v", c)
	require.Contains(t, c.Detail, "1 notifications given up (not sent), latest: 8-hook escalation.opened (event 8) to hook")
	require.Contains(t, c.Detail, "answered 404")
	require.Equal(t, "1 pending (1 failing and retried), 1 given up (mcp-scheduler doctor names them)", a.notifyLine(t.Context()))
}
