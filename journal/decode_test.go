package journal_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transcript"

	"golang.org/x/mod/sumdb/note"
)

// everyKind is a transcript journal writes with a line of every kind: a
// session that follows another, a prompt and its manifest, a call retried
// once then answered (its body kept), a call that failed, a refusal, an
// unattributed call, checkpoints, and the close.
func everyKind(t *testing.T) []byte {
	t.Helper()
	skey, _, err := note.GenerateKey(rand.Reader, "kinds")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	e, err := explain.Explain([]byte(`{"system": ["You are careful."]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var run bytes.Buffer
	j := journal.New(&run, &journal.Options{Session: "s2", Follows: "s1", Signer: signer})
	ctx := context.Background()
	p, err := j.Begin(ctx, journal.Request{Call: "c1", System: e.System, Manifest: e.Manifest})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Attempt(ctx, 429, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(ctx, journal.Response{Text: "ok", Body: []byte(`{"id":"r1"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	failing := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{}, errors.New("upstream down")
	})
	if _, err := j.Call(ctx, failing, journal.Request{Call: "c2", System: e.System, Manifest: e.Manifest}); err == nil {
		t.Fatal("the failing call did not fail")
	}
	if err := j.Refuse(ctx, "c3", "stale_prompt", "the prompt changed", []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	ok := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		return journal.Response{Text: "fine"}, nil
	})
	if _, err := j.Call(ctx, ok, journal.Request{Call: "c4", Unattributed: true, Body: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return run.Bytes()
}

// Every kind of line journal writes decodes to its typed members, each
// equal to what the writer was given.
func TestDecodeEveryKindJournalWrites(t *testing.T) {
	data := everyKind(t)
	if rep, err := transcript.Verify(bytes.NewReader(data), nil); err != nil || !rep.OK() {
		t.Fatalf("the transcript does not verify: %v %+v", err, rep)
	}
	seen := map[string]int{}
	var manifestHash digest.Digest
	var requestHash = map[int64]digest.Digest{}
	for i, raw := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		l, err := transcript.Decode(raw)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		seen[l.Kind]++
		if l.Seq != int64(i+1) {
			t.Errorf("line %d: seq %d", i+1, l.Seq)
		}
		switch b := l.Body.(type) {
		case *transcript.Open:
			if l.Session != "s2" || b.Follows != "s1" {
				t.Errorf("journal_open: %+v %+v", l, b)
			}
		case *transcript.SystemPrompt:
			if b.Content != "You are careful." || b.ContentHash != digest.Of(b.Content) {
				t.Errorf("system_prompt: %+v", b)
			}
		case *transcript.Retained:
			m, err := manifest.Read(b.Value)
			if err != nil || l.Kind != "context_manifest" || b.ContentHash != digest.Bytes(b.Value) {
				t.Errorf("context_manifest: %v %+v", err, m)
			}
			manifestHash = b.ContentHash
		case *transcript.Request:
			requestHash[l.Seq] = digest.Bytes(raw)
			switch l.Call {
			case "c1", "c2":
				if b.ManifestHash != manifestHash || len(b.Receipt) == 0 || !bytes.Contains(b.Request, []byte(`"messages"`)) {
					t.Errorf("request %s: %+v", l.Call, b)
				}
			case "c4":
				if b.Receipt != nil || b.ManifestHash != (digest.Digest{}) || !bytes.Contains(b.Request, []byte(`"body_segments"`)) {
					t.Errorf("unattributed request: %s %v %s", b.Receipt, b.ManifestHash, b.Request)
				}
			default:
				t.Errorf("request of call %q", l.Call)
			}
		case *transcript.Attempt:
			if l.Call != "c1" || b.Number != 1 || string(b.Failure) != `{"status":429}` || b.RequestHash != requestHash[b.RequestSeq] {
				t.Errorf("attempt: %+v %s", b, b.Failure)
			}
		case *transcript.Outcome:
			if b.RequestHash != requestHash[b.RequestSeq] || b.ContentHash == (digest.Digest{}) {
				t.Errorf("%s: %+v", l.Kind, b)
			}
			switch l.Call {
			case "c1":
				if l.Kind != "provider_call_response" || b.Body != `{"id":"r1"}` || !bytes.Contains(b.Value, []byte(`"text":"ok"`)) {
					t.Errorf("c1's response: %+v %s", b, b.Value)
				}
			case "c2":
				if l.Kind != "provider_call_error" || !bytes.Contains(b.Value, []byte("upstream down")) || b.Body != "" {
					t.Errorf("c2's error: %s", b.Value)
				}
			}
		case *transcript.Refusal:
			want := transcript.Refusal{Session: "s2", Call: "c3", Reason: "stale_prompt", Message: "the prompt changed",
				BodyBytes: 7, BodyContentHash: digest.Bytes([]byte(`{"x":1}`)).String()}
			if *b != want {
				t.Errorf("refusal: %+v, want %+v", *b, want)
			}
		case *transcript.Checkpoint:
			if !strings.Contains(b.Note, "\n\n— kinds ") {
				t.Errorf("checkpoint note: %q", b.Note)
			}
		case *transcript.Close:
			if b.Calls != 3 {
				t.Errorf("journal_close: calls %d", b.Calls)
			}
		default:
			t.Errorf("line %d (%s): body %T", i+1, l.Kind, l.Body)
		}
	}
	for _, k := range []string{"journal_open", "system_prompt", "context_manifest", "provider_call_request",
		"provider_call_attempt", "provider_call_response", "provider_call_error", "provider_call_refused",
		"journal_checkpoint", "journal_close"} {
		if seen[k] == 0 {
			t.Errorf("no %s line decoded", k)
		}
	}
}
