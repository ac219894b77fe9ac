//go:build !unix

package project

import "os"

// openFlags: systems without O_NONBLOCK have no FIFOs in the file system
// that open(2) would block on.
const openFlags = os.O_RDONLY

func isNotDir(error) bool { return false }
