//go:build !unix

package journal

import "os"

// lockFile is a no-op where flock does not exist: one writer per file.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
