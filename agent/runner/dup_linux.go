package runner

import "golang.org/x/sys/unix"

// dupTo makes newfd a copy of oldfd.
func dupTo(oldfd, newfd int) error { return unix.Dup3(oldfd, newfd, 0) }
