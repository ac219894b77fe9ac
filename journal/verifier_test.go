package journal_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transcript"

	"golang.org/x/mod/sumdb/note"
)

// liveRun writes, with the journal writer, a transcript of several
// sessions at once into one file, as the proxy does: calls with a manifest
// and without one (bodies kept as segments), errors, refusals, signed
// checkpoints every other call, sessions closed and left open, and a call
// left in flight. It returns the file's bytes and the verifier key.
func liveRun(t testing.TB, seed uint64, sessions int) ([]byte, note.Verifier) {
	return liveRunLate(t, seed, sessions, false)
}

// liveRunLate is liveRun, its call in flight begun before the others
// (early) or after them.
func liveRunLate(t testing.TB, seed uint64, sessions int, early bool) ([]byte, note.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "live")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	key, _ := note.NewVerifier(vkey)
	rnd := mrand.New(mrand.NewPCG(seed, 1))
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Second); return at }
	path := filepath.Join(t.TempDir(), "run.jsonl")
	ctx := context.Background()
	e, err := explain.Explain([]byte(`{"system": ["You are careful.", "Answer briefly."]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	js := make([]*journal.Journal, sessions)
	for i := range js {
		if js[i], err = journal.Open(path, &journal.Options{Clock: clock, Session: fmt.Sprintf("s%d", i), Signer: signer, CheckpointEvery: 2}); err != nil {
			t.Fatal(err)
		}
	}
	late := func() {
		if _, err := js[0].Begin(ctx, journal.Request{Call: "s0/late", System: e.System, Manifest: e.Manifest, Messages: json.RawMessage(`[{"role":"user","content":"late"}]`)}); err != nil {
			t.Fatal(err)
		}
	}
	if early {
		late()
	}
	history := make([]string, sessions)
	for turn := range 6 {
		for i, j := range js {
			call := fmt.Sprintf("s%d/%d", i, turn)
			switch rnd.IntN(6) {
			case 0:
				if err := j.Refuse(ctx, call, "malformed", "the body is not JSON", []byte("{"+call)); err != nil {
					t.Fatal(err)
				}
				continue
			case 1:
				failing := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
					return journal.Response{}, errors.New("upstream 529")
				})
				j.Call(ctx, failing, journal.Request{Call: call, System: e.System, Manifest: e.Manifest, Messages: json.RawMessage(`[{"role":"user","content":"hi"}]`)})
				continue
			case 2:
				if _, err := j.Call(ctx, reply(call), journal.Request{Call: call, System: e.System, Manifest: e.Manifest, Messages: json.RawMessage(`[{"role":"user","content":"` + call + `"}]`)}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			history[i] += fmt.Sprintf(`,{"role":"user","content":"turn %d of %s: %s"}`, turn, call, strings.Repeat("more ", rnd.IntN(20)))
			body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":5,"system":"You are careful.","messages":[` + history[i][1:] + `]}`)
			if _, err := j.Call(ctx, reply(call), journal.Request{Call: call, Body: body, Provider: "anthropic", Unattributed: true}); err != nil {
				t.Fatal(err)
			}
			history[i] += `,{"role":"assistant","content":"ok"}`
		}
	}
	// One call in flight; every other session closed.
	if !early {
		late()
	}
	for i, j := range js {
		if i%2 == 1 {
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, key
}

func reply(call string) journal.Model {
	return journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "reply to " + call}, nil
	})
}

// verdict is what a report says, as verify prints it and as its JSON
// carries it.
func verdict(t testing.TB, rep *transcript.Report, err error) string {
	t.Helper()
	var b bytes.Buffer
	if rep.WriteText(&b) != nil {
		t.Fatal("WriteText")
	}
	js, _ := json.Marshal(rep)
	return fmt.Sprintf("%s\n%s\nholds %v ok %v err %v", b.String(), js, rep.Holds(), rep.OK(), err)
}

// A Verifier given a transcript in pieces, cut anywhere (inside a line
// too), says after each piece what Verify says of the bytes so far, and
// at the end what Verify says of the whole: with and without the key, over
// runs of many sessions, checkpoints, refusals, errors, sessions open and a
// call in flight.
func TestAVerifierGivenPiecesSaysWhatVerifySays(t *testing.T) {
	for seed := range uint64(4) {
		data, key := liveRun(t, seed, 2+int(seed))
		for _, o := range []*transcript.Options{nil, {Verifier: key}} {
			rnd := mrand.New(mrand.NewPCG(seed, 2))
			v := transcript.NewVerifier(o)
			for at := 0; at < len(data); {
				next := min(len(data), at+1+rnd.IntN(400))
				if n, err := v.Write(data[at:next]); err != nil || n != next-at {
					t.Fatalf("Write: %d, %v", n, err)
				}
				at = next
				if rnd.IntN(4) > 0 && at < len(data) {
					continue
				}
				got, gerr := v.Report()
				want, werr := transcript.Verify(bytes.NewReader(data[:at]), o)
				if g, w := verdict(t, got, gerr), verdict(t, want, werr); g != w {
					t.Fatalf("seed %d, key %v, after %d of %d bytes:\nVerifier:\n%s\nVerify:\n%s", seed, o != nil, at, len(data), g, w)
				}
				if !reflect.DeepEqual(got.Calls, want.Calls) {
					t.Fatalf("seed %d, after %d bytes: the calls differ", seed, at)
				}
			}
			// Said once more, the same: Report ends nothing.
			a, _ := v.Report()
			b, _ := v.Report()
			if verdict(t, a, nil) != verdict(t, b, nil) {
				t.Fatal("a second Report differs from the first")
			}
			if seed == 0 && o != nil && (!a.Holds() || a.OK() || len(a.Open) == 0 || a.Refusals() == 0 || a.Checkpoints == 0) {
				t.Fatalf("the run is not what the test means (open, signed, refusals, holding):\n%s", verdict(t, a, nil))
			}
		}
	}
}

// A line past Options.MaxLineBytes stops a Verifier as it stops Verify.
func TestAVerifierStopsAtALineTooLong(t *testing.T) {
	data, _ := liveRun(t, 9, 1)
	o := &transcript.Options{MaxLineBytes: 300}
	v := transcript.NewVerifier(o)
	_, werr := v.Write(data)
	got, gerr := v.Report()
	want, err := transcript.Verify(bytes.NewReader(data), o)
	if !errors.Is(werr, promptloom.ErrTooLarge) || !errors.Is(gerr, promptloom.ErrTooLarge) || verdict(t, got, gerr) != verdict(t, want, err) {
		t.Fatalf("Write: %v; Verifier:\n%s\nVerify:\n%s", werr, verdict(t, got, gerr), verdict(t, want, err))
	}
}

// With KeepCalls, a report lists the last calls only, and counts and
// judges the rest as Verify does.
func TestKeepCallsCountsWhatItLetsGo(t *testing.T) {
	data, key := liveRunLate(t, 3, 5, true)
	full, _ := transcript.Verify(bytes.NewReader(data), &transcript.Options{Verifier: key})
	v := transcript.NewVerifier(&transcript.Options{Verifier: key, KeepCalls: 3})
	v.Write(data)
	kept, _ := v.Report()
	ok, inc, failed := full.Counts()
	kok, kinc, kfailed := kept.Counts()
	if len(kept.Calls) > 7 || len(kept.Calls) >= len(full.Calls) || [3]int{ok, inc, failed} != [3]int{kok, kinc, kfailed} ||
		kept.Holds() != full.Holds() || kept.OK() != full.OK() || kept.Refusals() != full.Refusals() || len(kept.Refused) > 6 {
		t.Fatalf("kept %d of %d calls, %d of %d refusals; counts %v %v %v against %v %v %v; holds %v %v",
			len(kept.Calls), len(full.Calls), len(kept.Refused), full.Refusals(), kok, kinc, kfailed, ok, inc, failed, kept.Holds(), full.Holds())
	}
	// The call in flight, read first, is still listed, first, as Verify
	// lists it.
	if c := kept.Calls[0]; c.Call != "s0/late" || !reflect.DeepEqual(c, full.Calls[0]) {
		t.Fatalf("the first call listed is %+v, want %+v", c, full.Calls[0])
	}
	last := full.Calls[len(full.Calls)-1]
	if got := kept.Calls[len(kept.Calls)-1]; got.Call != last.Call || got.Status != last.Status {
		t.Fatalf("the last call listed is %+v, want %+v", got, last)
	}
}
