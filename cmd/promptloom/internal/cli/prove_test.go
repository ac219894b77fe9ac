package cli

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transcript"
	"golang.org/x/mod/sumdb/note"
)

// signedRun appends a signed session of calls to path and returns the
// verifier key's file.
func signedRun(t *testing.T, path, session string, calls ...string) string {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "prover")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	j, err := journal.Open(path, &journal.Options{Session: session, Signer: signer, Clock: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	model := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "ok"}, nil
	})
	for _, c := range calls {
		if _, err := j.Call(context.Background(), model, journal.Request{Call: c, System: "Be brief.", Unattributed: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(filepath.Dir(path), session+".pub")
	if err := os.WriteFile(pub, []byte(vkey), 0o644); err != nil {
		t.Fatal(err)
	}
	return pub
}

// prove --call takes a call as cache and explain take it: NAME, or
// NAME@LINE with the line of its request. A line that is not the call's
// is refused, naming the line the call is at.
func TestProveTakesNameAtLine(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.jsonl")
	pub := signedRun(t, tr, "s1", "first", "second")
	rep, err := transcript.Verify(strings.NewReader(mustRead(t, tr)), nil)
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for _, c := range rep.Calls {
		if c.Call == "second" {
			line = c.Line
		}
	}
	ref := fmt.Sprintf("second@%d", line)
	proof := filepath.Join(dir, "second.proof")
	code, out, errOut := run(t, "prove", "--transcript", tr, "--call", ref, "--key", pub, "--out", proof)
	if code != ExitOK || out != "wrote the proof of call "+ref+" to "+proof+"\n" {
		t.Fatalf("prove --call %s: exit %d %q %s", ref, code, out, errOut)
	}
	byName := filepath.Join(dir, "byname.proof")
	if code, _, errOut := run(t, "prove", "--transcript", tr, "--call", "second", "--key", pub, "--out", byName); code != ExitOK {
		t.Fatalf("prove --call second: exit %d %s", code, errOut)
	}
	if a, b := mustRead(t, proof), mustRead(t, byName); a != b {
		t.Errorf("the proof of %s is not the proof of second:\n%s\n%s", ref, a, b)
	}
	if code, out, errOut := run(t, "verify", "--proof", proof, "--key", pub); code != ExitOK {
		t.Errorf("verify --proof: exit %d %s%s", code, out, errOut)
	}
	wrong := fmt.Sprintf("second@%d", line-1)
	code, _, errOut = run(t, "prove", "--transcript", tr, "--call", wrong, "--key", pub)
	if want := fmt.Sprintf(`no call "second" at line %d: its request is at line %d`, line-1, line); code != ExitFail || !strings.Contains(errOut, want) {
		t.Errorf("prove --call %s: exit %d %s; want %q", wrong, code, errOut, want)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A name two sessions of a file share: NAME@LINE picks one for explain and
// cache, but a proof is made of the one call of a name (transcript.Prove), so
// prove says that the line cannot choose, rather than that no call is
// named so.
func TestProveNameAtLineOfARepeatedName(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.jsonl")
	signedRun(t, tr, "s1", "first", "second")
	signedRun(t, tr, "s2", "first", "second")
	rep, err := transcript.Verify(strings.NewReader(mustRead(t, tr)), nil)
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for _, c := range rep.Calls {
		if c.Call == "second" {
			line = c.Line
		}
	}
	code, _, errOut := run(t, "prove", "--transcript", tr, "--call", fmt.Sprintf("second@%d", line))
	if want := `2 calls are named "second", and a proof is made only of a call whose name no other call has`; code != ExitFail || !strings.Contains(errOut, want) {
		t.Errorf("exit %d %s; want %q", code, errOut, want)
	}
}

// One reading of --call for every command: a line is a positive decimal
// number after the last @; anything else is part of the name.
func TestParseCallRef(t *testing.T) {
	for given, want := range map[string]callRef{
		"turn-3":                    {given: "turn-3", name: "turn-3"},
		"turn-3@12":                 {given: "turn-3@12", name: "turn-3", line: 12},
		"a@b@7":                     {given: "a@b@7", name: "a@b", line: 7},
		"turn@5x":                   {given: "turn@5x", name: "turn@5x"},
		"turn@+5":                   {given: "turn@+5", name: "turn@+5"},
		"turn@0":                    {given: "turn@0", name: "turn@0"},
		"turn@":                     {given: "turn@", name: "turn@"},
		"turn@99999999999999999999": {given: "turn@99999999999999999999", name: "turn@99999999999999999999"},
	} {
		if got := parseCallRef(given); got != want {
			t.Errorf("%q: %+v, want %+v", given, got, want)
		}
	}
}
