package adapters

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseResetClock(t *testing.T) {
	utc := time.UTC
	now := time.Date(2026, 12, 1, 18, 30, 0, 0, utc)
	sh, err := time.LoadLocation("Asia/Shanghai")
	require.NoError(t, err)
	for _, tc := range []struct {
		text string
		want time.Time // zero: not readable
	}{
		{"You've hit your limit · resets 2pm (Asia/Shanghai)", time.Date(2026, 12, 2, 14, 0, 0, 0, sh)},
		{"You've hit your limit · resets 8pm (UTC)", time.Date(2026, 12, 1, 20, 0, 0, 0, utc)},
		{"usage limit reached · resets 6:30pm", time.Date(2026, 12, 1, 18, 30, 0, 0, utc)}, // within its minute: this one
		{"usage limit reached · resets 6:29pm", time.Date(2026, 12, 2, 18, 29, 0, 0, utc)}, // its minute is over
		{"usage limit reached · resets 6:28pm", time.Date(2026, 12, 2, 18, 28, 0, 0, utc)}, // past: tomorrow
		{"resets 12am (UTC)", time.Date(2026, 12, 2, 0, 0, 0, 0, utc)},
		{"resets Dec 3, 2pm (UTC)", time.Date(2026, 12, 3, 14, 0, 0, 0, utc)},
		{"resets Jan 2 at 9am (UTC)", time.Date(2027, 1, 2, 9, 0, 0, 0, utc)},
		{"try again at 6:16 PM.", time.Date(2026, 12, 2, 18, 16, 0, 0, utc)},
		{"try again at Dec 2nd, 2026 7:16 PM.", time.Date(2026, 12, 2, 19, 16, 0, 0, utc)},
		{"resets 2pm (Mars/Olympus)", time.Time{}},
		{"resets 13pm", time.Time{}},
		{"resets soon", time.Time{}},
		{"", time.Time{}},
	} {
		got, ok := parseResetClock(tc.text, utc, now)
		require.Equal(t, !tc.want.IsZero(), ok, tc.text)
		if ok {
			require.True(t, tc.want.Equal(got), "%s: got %s want %s", tc.text, got, tc.want)
		}
	}
}
