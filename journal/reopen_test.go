package journal

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/transcript"
	"github.com/tidwall/gjson"
)

// opens lists the session ids of a transcript file's journal_open lines.
func opens(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if gjson.GetBytes(line, "kind").Str == chain.KindOpen {
			ids = append(ids, gjson.GetBytes(line, "session").Str)
		}
	}
	return ids
}

// run records calls in a journal on path under session, then closes it.
func run(t *testing.T, path string, o Options, calls ...string) {
	t.Helper()
	j, err := Open(path, &o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if _, err := j.Call(ctx, echo, request(t, c, `{"system": "You are careful."}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// A session id reused by a later run on the same file (a proxy started
// again with the same Promptloom-Session) is opened under a fresh id that
// names the earlier one: every call is recorded, and the file verifies,
// where opening the id again would fail it ("opened twice").
func TestSessionReusedInALaterRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	o := Options{Clock: clock, Session: "s1"}
	run(t, path, o, "a1", "a2")
	run(t, path, o, "b1")
	run(t, path, o, "c1")
	if got, want := opens(t, path), []string{"s1", "s1~1", "s1~2"}; !slices.Equal(got, want) {
		t.Errorf("sessions opened %q, want %q", got, want)
	}
	rep := verifyFile(t, path)
	if v, _, _ := rep.Counts(); v != 4 {
		t.Errorf("%d calls verified, want 4", v)
	}
}

// Two journals opened on one file under one session id before either
// writes (two processes, or a proxy and a harness) learn of each other
// when each opens its session, under the file's lock: the second opens a
// fresh id.
func TestSessionOpenedByTwoJournalsAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	o := Options{Clock: clock, Session: "s1"}
	j, err := Open(path, &o)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Open(path, &o)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []*Journal{j, k, j, k} {
		if _, err := w.Call(ctx, echo, request(t, fmt.Sprintf("c%d", i), `{"system": "You are careful."}`)); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	k.Close()
	if got, want := opens(t, path), []string{"s1", "s1~1"}; !slices.Equal(got, want) {
		t.Errorf("sessions opened %q, want %q", got, want)
	}
	verifyFile(t, path)
}

// A signed session reopened under a fresh id is signed under that id: its
// checkpoints' origin names it, and the file verifies with the key.
func TestSessionReusedSigned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	s, v := keys(t, "run")
	o := Options{Clock: clock, Session: "s1", Signer: s}
	run(t, path, o, "a1")
	run(t, path, o, "b1")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, text := verifyWith(string(b), &transcript.Options{Verifier: v})
	if !rep.OK() || rep.Checkpoints != 2 {
		t.Errorf("verify --key: %d checkpoint(s)\n%s", rep.Checkpoints, text)
	}
}

// The ids a file opens are read as Verify reads them: a journal_open
// spelt otherwise than a writer spells it (its kind escaped) opens its id
// too, and a line longer than the reader's buffer (a large request) is
// read past, not mistaken.
func TestSessionReusedReadAsVerifyReads(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "s1"})
	r := request(t, "a1", `{"system": "You are careful."}`)
	r.Messages = []byte(`[{"role":"user","content":"` + strings.Repeat("a long message ", 20000) + `"}]`)
	if _, err := j.Call(ctx, echo, r); err != nil {
		t.Fatal(err)
	}
	j.Close()
	escaped := rechain(strings.Replace(buf.String(), `"kind":"journal_open"`, `"kind":"journal\u005fopen"`, 1))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	if err := os.WriteFile(path, []byte(escaped), 0o644); err != nil {
		t.Fatal(err)
	}
	verifyFile(t, path)
	run(t, path, Options{Clock: clock, Session: "s1"}, "b1")
	if got, want := opens(t, path), []string{"s1", "s1~1"}; !slices.Equal(got, want) {
		t.Errorf("sessions opened %q, want %q", got, want)
	}
	verifyFile(t, path)
}
