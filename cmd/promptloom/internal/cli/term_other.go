//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package cli

// isTerminal cannot tell here: noticeTerminal falls back on the file's
// mode.
func isTerminal(uintptr) (is, known bool) { return false, false }
