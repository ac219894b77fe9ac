package project

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// detectWithin runs Detect and fails the test if it takes longer than a
// few seconds (it would block forever on a FIFO it opened for reading).
func detectWithin(t *testing.T, dir string) (*Profile, error) {
	t.Helper()
	type result struct {
		p   *Profile
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := Detect(dir, none)
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		return r.p, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("Detect(%s) still blocked after 5 s", dir)
		return nil, nil
	}
}

// A signal file that is not a regular file (a FIFO, a directory, a
// device) is no signal: Detect neither blocks on it nor fails.
func TestDetectSkipsFilesThatAreNotRegular(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink to /dev/zero", func(t *testing.T, path string) {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		for _, name := range []string{"go.mod", "package.json", "tsconfig.json", filepath.Join(".git", "config")} {
			t.Run(c.name+" "+name, func(t *testing.T) {
				dir := t.TempDir()
				write(t, dir, map[string]string{"Cargo.toml": "[package]\nname = \"fishery\"\n"})
				os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
				c.make(t, filepath.Join(dir, name))
				p, err := detectWithin(t, dir)
				if err != nil {
					t.Fatalf("Detect: %v", err)
				}
				if diff := cmp.Diff([]string{"language.rust"}, p.Caps); diff != "" {
					t.Errorf("caps (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// A .git that is a symlink to a repository's directory is followed.
func TestDetectGitSymlinkToDirectory(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"repo.git/config": "[remote \"origin\"]\n\turl = git@github.com:acme/tool.git\n"})
	os.Mkdir(filepath.Join(root, "proj"), 0o755)
	if err := os.Symlink(filepath.Join(root, "repo.git"), filepath.Join(root, "proj", ".git")); err != nil {
		t.Fatal(err)
	}
	p, err := detectWithin(t, filepath.Join(root, "proj"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"forge.github", "vcs.git"}, p.Caps); diff != "" {
		t.Errorf("caps (-want +got):\n%s", diff)
	}
}

// A symlink to a regular file is still read.
func TestDetectFollowsSymlinkToRegularFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"real.mod": "module example.com/tool\n"})
	if err := os.Symlink("real.mod", filepath.Join(dir, "go.mod")); err != nil {
		t.Fatal(err)
	}
	p, err := detectWithin(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"language.go"}, p.Caps); diff != "" {
		t.Errorf("caps (-want +got):\n%s", diff)
	}
}

// In a git worktree or a submodule, .git is a file "gitdir: PATH". The
// remote is read from the repository it points to: for a worktree, from
// the common directory its commondir file names.
func TestDetectGitdirFile(t *testing.T) {
	const remote = "[remote \"origin\"]\n\turl = https://github.com/acme/tool.git\n"
	want := []string{"forge.github", "vcs.git"}
	for _, c := range []struct {
		name  string
		files map[string]string // relative to a root; the project is root/proj
	}{
		{"submodule, relative gitdir", map[string]string{
			"proj/.git":                      "gitdir: ../super/.git/modules/proj\n",
			"super/.git/modules/proj/config": remote,
		}},
		{"worktree, commondir", map[string]string{
			"proj/.git":                          "gitdir: ../main/.git/worktrees/proj\n",
			"main/.git/worktrees/proj/commondir": "../..\n",
			"main/.git/worktrees/proj/HEAD":      "ref: refs/heads/topic\n",
			"main/.git/config":                   remote,
		}},
		{"worktree, absolute gitdir", map[string]string{
			"proj/.git":                          "gitdir: ROOT/main/.git/worktrees/proj\r\n",
			"main/.git/worktrees/proj/commondir": "ROOT/main/.git\n",
			"main/.git/config":                   remote,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{}
			for k, v := range c.files {
				files[k] = strings.ReplaceAll(v, "ROOT", root)
			}
			write(t, root, files)
			p, err := detectWithin(t, filepath.Join(root, "proj"))
			if err != nil {
				t.Fatalf("Detect: %v", err)
			}
			if diff := cmp.Diff(want, p.Caps); diff != "" {
				t.Errorf("caps (-want +got):\n%s", diff)
			}
		})
	}
	// A .git file whose gitdir is missing still says the project is under
	// git, with no forge; a .git file that is no gitdir line says nothing.
	for body, want := range map[string][]string{
		"gitdir: ../missing\n": {"vcs.git"},
		"gitdir: /dev/zero\n":  {"vcs.git"},
		"not a gitdir line\n":  nil,
		"":                     nil,
		"gitdir: \n":           nil,
	} {
		root := t.TempDir()
		write(t, root, map[string]string{"proj/.git": body})
		p, err := detectWithin(t, filepath.Join(root, "proj"))
		if err != nil {
			t.Fatalf(".git %q: %v", body, err)
		}
		if diff := cmp.Diff(want, p.Caps); diff != "" {
			t.Errorf(".git %q: caps (-want +got):\n%s", body, diff)
		}
	}
}
