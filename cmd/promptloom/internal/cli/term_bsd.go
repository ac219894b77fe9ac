//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import (
	"syscall"
	"unsafe"
)

// isTerminal reports whether fd is a terminal: whether it answers a
// terminal's ioctl (TIOCGETA), as isatty(3) asks. A character device that
// is not one (/dev/null) does not. known is false where it cannot tell.
func isTerminal(fd uintptr) (is, known bool) {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGETA, uintptr(unsafe.Pointer(&t)))
	return errno == 0, true
}
