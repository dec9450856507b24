package postgres

import (
	"net/url"
	"strings"
)

// redactURL returns a connection URL fit for a message: a postgres:// URL with its password
// replaced by xxxxx; a key=value connection string with any password=… value hidden.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	fields := strings.Fields(s)
	for i, f := range fields {
		if k, _, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "password") {
			fields[i] = k + "=xxxxx"
		}
	}
	return strings.Join(fields, " ")
}

// SafeURL is a connection URL fit for a message: redactURL, except that a URL which does not parse is not shown at all (its
// password could not be found).
func SafeURL(s string) string {
	if _, err := url.Parse(s); err != nil && strings.Contains(s, "://") {
		return "(unparsable URL)"
	}
	return redactURL(s)
}
