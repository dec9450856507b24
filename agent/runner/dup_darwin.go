package runner

import "golang.org/x/sys/unix"

// dupTo makes newfd a copy of oldfd.
func dupTo(oldfd, newfd int) error { return unix.Dup2(oldfd, newfd) }
