package adapters

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the zone a CLI names ("Asia/Shanghai") is found without the host's zoneinfo
)

// resetClock matches the reset time the CLIs print in words: Claude Code's "resets 2pm
// (Asia/Shanghai)", "resets 2:30pm", "resets Dec 3, 2pm (UTC)"; Codex's "try again at 6:16 PM"
// and "try again at Dec 2nd, 2026 7:16 PM". Groups: month, day, year, hour, minute, am/pm,
// zone.
var resetClock = regexp.MustCompile(`(?i)(?:resets|try again at)\s+(?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(\d{4})\s+)?(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b(?:\s*\(([^)]+)\))?`)

var monthIndex = map[string]time.Month{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// parseResetClock reads the reset time out of a CLI's message: in the zone the message names
// (an IANA name such as "Asia/Shanghai", or "UTC"), else in local (the zone the CLI printed
// in: it runs beside us). A time without a date is its next occurrence after now; a date
// without a year is in now's year, or the next when that is past. ok is false when s names
// no reset time it can read (the caller then backs off).
func parseResetClock(s string, local *time.Location, now time.Time) (time.Time, bool) {
	g := resetClock.FindStringSubmatch(s)
	if g == nil {
		return time.Time{}, false
	}
	loc := local
	if z := strings.TrimSpace(g[7]); z != "" {
		l, err := time.LoadLocation(z)
		if err != nil {
			return time.Time{}, false // a zone we cannot place: an hour we cannot trust
		}
		loc = l
	}
	hour, _ := strconv.Atoi(g[4])
	minute := 0
	if g[5] != "" {
		minute, _ = strconv.Atoi(g[5])
	}
	if hour < 1 || hour > 12 || minute > 59 {
		return time.Time{}, false
	}
	hour %= 12
	if strings.EqualFold(g[6], "pm") {
		hour += 12
	}
	n := now.In(loc)
	if g[1] == "" {
		t := time.Date(n.Year(), n.Month(), n.Day(), hour, minute, 0, 0, loc)
		if !t.After(now.Add(-time.Minute)) { // printed to the minute: within it, it is this one
			t = t.AddDate(0, 0, 1)
		}
		return t, true
	}
	day, _ := strconv.Atoi(g[2])
	year := n.Year()
	if g[3] != "" {
		year, _ = strconv.Atoi(g[3])
	}
	t := time.Date(year, monthIndex[strings.ToLower(g[1][:3])], day, hour, minute, 0, 0, loc)
	if g[3] == "" && !t.After(now) {
		t = t.AddDate(1, 0, 0)
	}
	return t, true
}
