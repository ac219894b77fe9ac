package eventlog

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// A connection URL quoted in an error never carries its password.
func TestDSNForError(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://alice:s3cret@db.example:5432/log":                 "postgres://alice:xxxxx@db.example:5432/log",
		"postgres://alice@db.example/log?password=s3cret&sslmode=off": "postgres://alice@db.example/log?password=xxxxx&sslmode=off",
		"postgres://alice:p%40ss@db.example/log":                      "postgres://alice:xxxxx@db.example/log",
		"postgres://db.example/log":                                   "postgres://db.example/log",
		"postgres://alice:s3cret@db.example:port/log\x7f":             "(a connection URL that does not parse)",
	} {
		if got := dsnForError(dsn); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("dsnForError(%q) = %q, want %q", dsn, got, want)
		}
	}
}
