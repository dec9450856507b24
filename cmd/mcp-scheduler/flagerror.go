package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// flagError is a flag parsing mistake told in CLI words: a value the flag's type cannot hold
// names the flag, the value and the type wanted ("--cost-limit-usd: "abc" is not a number"),
// not the Go parser's message (strconv.ParseFloat: … invalid syntax). Other errors pass as
// pflag words them. Either way it is a usage mistake (exit 2).
func flagError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return usageError{err}
	}
	f := bad.GetFlag()
	return usageError{fmt.Errorf("--%s: %q is not %s (see --help)", f.Name, bad.GetValue(), typeWords(f.Value.Type()))}
}

// typeWords says what a pflag value type accepts.
func typeWords(t string) string {
	switch t {
	case "float64", "float32":
		return "a number"
	case "int", "int64", "int32", "uint", "uint64":
		return "a whole number"
	case "bool":
		return "true or false"
	case "duration":
		return `a Go duration such as "90s" or "5m"`
	default:
		return "a valid " + t
	}
}
