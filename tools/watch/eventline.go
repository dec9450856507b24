package watch

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcp-scheduler/mcp-scheduler/engine/domain"
	"github.com/mcp-scheduler/mcp-scheduler/tools"
)

// eventSep separates the fields of an event line.
const eventSep = " · "

// eventText is one event of a mission's log as a person reads it: the time, the type, the
// mission (and attempt), then each field of its data as "name: value" (a nested field as
// "outer.inner: value", a list's items joined with ", "), in name order, on one line that the
// log screen wraps between words (wrapRow). Nothing is cut. Data that is not a JSON object is
// shown as it is, compacted.
func eventText(e domain.Event) string {
	parts := []string{fmt.Sprintf("%s  %s", e.At.Local().Format("15:04:05"), e.Type)}
	if e.MissionID != "" {
		who := e.MissionID
		if e.Attempt > 0 {
			who += fmt.Sprintf(" attempt %d", e.Attempt)
		}
		parts = append(parts, who)
	}
	if e.Actor != "" {
		parts = append(parts, "by "+e.Actor)
	}
	if len(e.Data) > 0 {
		var data map[string]any
		if json.Unmarshal(e.Data, &data) == nil {
			parts = append(parts, fields("", data)...)
		} else if s := tools.CompactJSON(string(e.Data)); s != "null" {
			parts = append(parts, s)
		}
	}
	return oneLine(strings.Join(parts, eventSep))
}

// fields lays a JSON object out as "name: value" items, nested objects under dotted names.
func fields(prefix string, data map[string]any) []string {
	names := make([]string, 0, len(data))
	for k := range data {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		name := prefix + k
		if inner, ok := data[k].(map[string]any); ok {
			out = append(out, fields(name+".", inner)...)
			continue
		}
		out = append(out, name+": "+value(data[k]))
	}
	return out
}

// value is one JSON value as text: a string as it is, a list as its items joined with ", ",
// an object as its "name: value" items in braces, anything else as JSON writes it.
func value(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case []any:
		items := make([]string, len(v))
		for i, x := range v {
			items[i] = value(x)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case map[string]any:
		return "{" + strings.Join(fields("", v), ", ") + "}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
