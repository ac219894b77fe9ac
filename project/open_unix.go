//go:build unix

package project

import (
	"errors"
	"os"
	"syscall"
)

// openFlags opens without blocking: open(2) of a FIFO with no writer
// would otherwise wait forever.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

// isNotDir reports ENOTDIR: a path through a file where a directory was
// expected (.git/config when .git is a file) does not exist either.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
