package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/internal/testkit/storetest"

	"github.com/google/go-cmp/cmp"
)

// Any path names the file it names: '#', '?' and '%' are not URI syntax to
// Open ("C#proj/run.db" once wrote ./C, "q?x.db" wrote ./q without
// WAL, "p%41.db" wrote pA.db).
func TestSQLiteOpensTheFileThePathNames(t *testing.T) {
	for _, name := range []string{"C#proj/run.db", "q?x.db", "p%41.db", "a b&c=d.db", "x%3F#?%.db", "plain.db"} {
		for _, relative := range []bool{false, true} {
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, name)
				if relative {
					t.Chdir(dir)
					path = name
				}
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				s, err := Open(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				ctx := context.Background()
				if _, err := s.Append(ctx, eventlog.Draft{Kind: "k", Payload: 1}); err != nil {
					t.Fatal(err)
				}
				var mode string
				if err := s.(*store).db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
					t.Errorf("journal_mode = %q, %v; want wal", mode, err)
				}
				var files []string
				filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						rel, _ := filepath.Rel(dir, p)
						files = append(files, filepath.ToSlash(rel))
					}
					return nil
				})
				sort.Strings(files)
				want := []string{name, name + "-shm", name + "-wal"}
				sort.Strings(want)
				if diff := cmp.Diff(want, files); diff != "" {
					t.Errorf("files in the directory:\n%s", diff)
				}
				if !strings.Contains(name, "/") {
					if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
}

// open opens a fresh log in the test's directory.
func open(t *testing.T, opts *eventlog.Options) eventlog.Store {
	s, err := Open(filepath.Join(t.TempDir(), "log.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The conformance suite: everything an eventlog.Store promises
// (storetest.Run).
func TestConformanceSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock func() time.Time) eventlog.Store {
		return open(t, &eventlog.Options{Clock: clock})
	})
}

func TestSQLiteReopenReturnsWhatWasCommitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	storetest.Reopen(t, func(clock func() time.Time) (eventlog.Store, error) {
		return Open(path, &eventlog.Options{Clock: clock})
	})
}

// TestCrashChild is the writer of TestSQLiteCrash (storetest.StartWriter).
func TestCrashChild(t *testing.T) {
	storetest.CrashChild(t, func(path string) (eventlog.Store, error) { return Open(path, nil) })
}

// A writer killed with SIGKILL mid-append: reopened, the log holds every
// acknowledged event, and no partial batch.
func TestSQLiteCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	storetest.Crash(t, path, func() (eventlog.Store, error) { return Open(path, nil) })
}

// BenchmarkAppend measures append throughput (storetest.BenchAppend).
// Quoted in docs/performance.md.
func BenchmarkAppend(b *testing.B) {
	storetest.BenchAppend(b, "SQLite", func(b *testing.B) func() eventlog.Store {
		path := filepath.Join(b.TempDir(), "log.db")
		return func() eventlog.Store {
			s, err := Open(path, nil)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}
	})
}
