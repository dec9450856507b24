package adapters

import "testing"

func TestOnlyRecordsWork(t *testing.T) {
	for cmd, want := range map[string]bool{
		"git commit -m x":                                          true,
		"git add -A && git commit -m 'say hello'":                  true,
		`/bin/bash -lc "git add hello.txt && git commit -m hello"`: true,
		"git -C /w status; git diff":                               true,
		"git push origin main":                                     false,
		"git add -A && git push":                                   false,
		"rm -rf build":                                             false,
		"git commitx":                                              false,
		`/bin/bash -lc "printf %s 'hi' > x.txt"`:                   false,
		"":                                                         false,
	} {
		if got := onlyRecordsWork(cmd); got != want {
			t.Errorf("onlyRecordsWork(%q) = %v, want %v", cmd, got, want)
		}
	}
}
