package eventlog

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Any path names the file it names: '#', '?' and '%' are not URI syntax to
// OpenSQLite ("C#proj/run.db" once wrote ./C, "q?x.db" wrote ./q without
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
				s, err := OpenSQLite(path)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				ctx := context.Background()
				if _, err := s.Append(ctx, Draft{Kind: "k", Payload: 1}); err != nil {
					t.Fatal(err)
				}
				var mode string
				if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
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
