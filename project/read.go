package project

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// readRegular returns the first maxFileBytes of path when it is a regular
// file (or a symlink to one), nil when it does not exist or is anything
// else: a FIFO, a device, a socket or a directory named like a signal file
// is no signal. The file is opened without blocking (openFlags), so a FIFO
// with no writer cannot hang Detect; only its Stat is looked at before a
// single byte is read.
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || isNotDir(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// gitConfig finds the config of the repository dir belongs to: .git/config
// when .git is a directory; when .git is a file "gitdir: PATH" (a worktree
// or a submodule), the config of PATH or, for a worktree, of the common
// directory PATH/commondir names. Relative paths are taken from the file
// that holds them, as git does. isGit says whether dir is under git at all.
func (d *detector) gitConfig() (config []byte, isGit bool) {
	dotGit := filepath.Join(d.dir, ".git")
	info, err := os.Stat(dotGit) // a symlink to a .git directory is one
	if err != nil {
		return nil, false
	}
	if info.IsDir() {
		b := d.readAt(filepath.Join(dotGit, "config"), filepath.Join(".git", "config"))
		return b, b != nil
	}
	b := d.readAt(dotGit, ".git")
	gitdir := gitdirLine(b)
	if gitdir == "" {
		return nil, false
	}
	gitdir = relativeTo(d.dir, gitdir)
	if common := strings.TrimSpace(string(d.readAt(filepath.Join(gitdir, "commondir"), ".git"))); common != "" {
		gitdir = relativeTo(gitdir, common)
	}
	return d.readAt(filepath.Join(gitdir, "config"), ".git"), true
}

// gitdirLine is PATH of a .git file's "gitdir: PATH" line, or "".
func gitdirLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	rest, ok := bytes.CutPrefix(line, []byte("gitdir:"))
	if !ok {
		return ""
	}
	return strings.TrimSpace(string(rest))
}

// relativeTo resolves p against base unless it is absolute.
func relativeTo(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}
