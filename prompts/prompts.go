package prompts

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var files embed.FS

// Template names, one per embedded file (templates/<name>.tmpl).
const (
	NamePlanVoyage       = "plan_voyage"
	NameAgentBrief       = "agent_brief"
	NameReviewMission    = "review_mission"
	NameEscalationReport = "escalation_report"
)

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"join":   strings.Join,
	"indent": indent,
	"fence":  fence,
}).Option("missingkey=error").ParseFS(files, "templates/*.tmpl"))

// Names lists the templates in a fixed order.
func Names() []string {
	return []string{NamePlanVoyage, NameAgentBrief, NameReviewMission, NameEscalationReport}
}

// render executes one template; the output is trimmed and ends with exactly one newline.
func render(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name+".tmpl", data); err != nil {
		return "", fmt.Errorf("prompts: render %s: %w", name, err)
	}
	return strings.TrimSpace(collapseBlankLines(b.String())) + "\n", nil
}

// collapseBlankLines folds runs of blank lines (left by optional template sections) into one.
func collapseBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// indent prefixes every line of s with n spaces.
func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
}

// fence wraps s in a Markdown code fence long enough not to be closed by s itself.
func fence(lang, s string) string {
	ticks := "```"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + ticks
}
