package journal

import (
	"fmt"
	"os"
	"path/filepath"

	"bytes"
	"context"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"

	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// The provider's own cache verdict the transport put in a response's
// usage is what the verifier reads back, for cache --transcript to show.
func TestVerifyReadsTheProvidersCacheVerdict(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "s1"})
	model := ModelFunc(func(_ context.Context, req Request) (Response, error) {
		return Response{Text: "ok", Usage: &payload.Usage{InputTokens: 10, CacheReadTokens: 4, CacheMissReason: "tools_changed", CacheMissedTokens: 6}}, nil
	})
	if _, err := j.Call(ctx, model, request(t, "c1", `{"system": ["You are careful."]}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Verify(strings.NewReader(buf.String()), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep)
	}
	u := rep.Calls[0].Usage
	if u == nil || u.CacheMissReason != "tools_changed" || u.CacheMissedTokens != 6 || u.CacheReadTokens != 4 {
		t.Fatalf("usage %+v", u)
	}
}

// live writes n calls into a journal left open (a proxy still running),
// signed by s when s is not nil, checkpointing every two calls, and
// returns what it wrote so far.
func live(t *testing.T, s note.Signer, n int) string {
	t.Helper()
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "s1", Signer: s, CheckpointEvery: 2})
	for i := range n {
		if _, err := j.Call(ctx, echo, request(t, fmt.Sprintf("c%d", i), `{"system": ["You are careful."]}`)); err != nil {
			t.Fatal(err)
		}
	}
	return buf.String()
}

func reportOf(t *testing.T, tx string, o *transcript.Options) (*transcript.Report, string) {
	t.Helper()
	rep, err := transcript.Verify(strings.NewReader(tx), o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	return rep, b.String()
}

// A transcript still being written holds as far as it is written, and
// says it is open with its calls so far; it is not OK (finished), and the
// same transcript with a byte altered, or a closed one cut, does not hold.
func TestAnOpenTranscriptHoldsSoFar(t *testing.T) {
	open := live(t, nil, 3)
	rep, text := reportOf(t, open, nil)
	if !rep.Holds() || rep.OK() || len(rep.Open) != 1 || rep.Open[0] != (transcript.OpenSession{Session: "s1", Line: 1, Calls: 3}) {
		t.Fatalf("holds %v, ok %v, open %+v:\n%s", rep.Holds(), rep.OK(), rep.Open, text)
	}
	for _, w := range []string{"OPEN session s1 (line 1) is open: 3 call(s) so far", "open: session s1 with 3 call(s) so far; verified through line 9"} {
		if !strings.Contains(text, w) {
			t.Errorf("no %q in:\n%s", w, text)
		}
	}
	for _, p := range rep.Problems {
		if !rep.Pending(p) || p.Rule != transcript.RuleSessionUnclosed {
			t.Errorf("problem %v", p)
		}
	}

	// A call in flight: its request written, its answer not yet (what
	// the transcript holds while the model answers).
	var buf bytes.Buffer
	var inflight string
	jr := New(&buf, &Options{Clock: clock, Session: "s1"})
	snap := ModelFunc(func(_ context.Context, req Request) (Response, error) {
		inflight = buf.String()
		return Response{Text: "late"}, nil
	})
	for i, m := range []Model{echo, snap} {
		if _, err := jr.Call(ctx, m, request(t, fmt.Sprintf("c%d", i), `{"system": ["You are careful."]}`)); err != nil {
			t.Fatal(err)
		}
	}
	rep, text = reportOf(t, inflight, nil)
	if !rep.Holds() || rep.OK() || !strings.Contains(text, "OPEN line 6: call c1 (seq 6): no answer yet: its session is open") || !strings.Contains(text, "1 in flight") {
		t.Errorf("a call in flight:\n%s", text)
	}
	// The same request left unanswered in a closed session fails.
	if rep, text := reportOf(t, inflight+closeLine(t, inflight, 2), nil); rep.Holds() {
		t.Errorf("unanswered in a closed session holds:\n%s", text)
	}

	// A line being written: the last line has no newline yet.
	torn := open + `{"prev":"blake3:`
	rep, text = reportOf(t, torn, nil)
	if !rep.Holds() || rep.Lines != 9 || !strings.Contains(text, "OPEN line 10 is not whole yet") {
		t.Errorf("a torn last line:\n%s", text)
	}

	// Tampered: a reply altered, or a line removed in the middle.
	for name, bad := range map[string]string{
		"altered":            strings.Replace(open, "reply to c1", "reply to cX", 1),
		"cut":                strings.Join(append(strings.SplitAfter(open, "\n")[:3], strings.SplitAfter(open, "\n")[4:]...), ""),
		"torn in the middle": strings.Replace(open, "\n", "", 1),
	} {
		if rep, text := reportOf(t, bad, nil); rep.Holds() {
			t.Errorf("%s: holds:\n%s", name, text)
		}
	}

	// A closed transcript cut after a call reads as open: Holds, not OK.
	closed := recorded(t)
	ls := strings.SplitAfter(closed, "\n")
	cutClosed := strings.Join(ls[:len(ls)-2], "")
	if rep, text := reportOf(t, cutClosed, nil); rep.OK() || !rep.Holds() || !strings.Contains(text, "verify --closed fails it") {
		t.Errorf("a closed transcript cut:\n%s", text)
	}
	if rep, _ := reportOf(t, closed, nil); !rep.OK() || !rep.Holds() || rep.Open != nil {
		t.Errorf("closed: %+v", rep)
	}
}

// closeLine is the journal_close of session s1 with calls calls, chained
// after transcript.
func closeLine(t *testing.T, tx string, calls int) string {
	t.Helper()
	ls := strings.Split(strings.TrimSuffix(tx, "\n"), "\n")
	prev := chain.LineHash([]byte(ls[len(ls)-1]))
	return fmt.Sprintf(`{"prev":%q,"seq":%d,"kind":"journal_close","at":"2026-11-03T00:00:00Z","session":"s1","calls":%d}`+"\n", prev, len(ls)+1, calls)
}

// Given a key, a session still open holds with its tail unsigned, and a
// call its checkpoints cover already is proved; one after them is not.
// A closed session whose closing checkpoint is cut does not hold.
func TestAnOpenSignedTranscriptProvesWhatItsCheckpointsCover(t *testing.T) {
	s, key := keys(t, "live")
	open := live(t, s, 3) // a checkpoint after c1; c2 after it
	o := &transcript.Options{Verifier: key}
	rep, text := reportOf(t, open, o)
	if !rep.Holds() || rep.OK() || rep.SignedBy != "live" || !strings.Contains(text, "are not signed yet") {
		t.Fatalf("holds %v, signed by %q:\n%s", rep.Holds(), rep.SignedBy, text)
	}
	proof, _, why := proveWith(open, "c1", o)
	if proof == nil {
		t.Fatalf("no proof of a covered call:\n%s", why)
	}
	if rep, err := transcript.CheckProof(bytes.NewReader(proof), key, nil); err != nil || !rep.OK() {
		t.Errorf("the proof does not check: %v %+v", err, rep)
	}
	if proof, rep, why := proveWith(open, "c2", o); proof != nil || !hasRule(rep, transcript.RuleProveUncovered) {
		t.Errorf("a call no checkpoint covers is proved:\n%s", why)
	}

	closed := signed(t, s, 2, 3)
	ls := strings.SplitAfter(closed, "\n")
	noLastCheckpoint := strings.Join(ls[:len(ls)-2], "")
	if rep, text := reportOf(t, noLastCheckpoint, o); rep.Holds() {
		t.Errorf("a closed session without its closing checkpoint holds:\n%s", text)
	}
}

// A session that follows another says so on its journal_open; the
// verifier holds it to that session, closed first, and reports it.
func TestASessionFollowsAnother(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	first, err := Open(path, &Options{Clock: clock, Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Call(ctx, echo, request(t, "c1", `{"system": ["You are careful."]}`)); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	next, err := Open(path, &Options{Clock: clock, Session: "s2", Follows: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if _, err := next.Call(ctx, echo, request(t, "c2", `{"system": ["You are careful."]}`)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := bytes.NewBuffer(data)
	rep, text := reportOf(t, buf.String(), nil)
	if !rep.Holds() || len(rep.Open) != 1 || rep.Open[0].Follows != "s1" || !strings.Contains(text, "session s2 (following s1) with 1 call(s) so far") {
		t.Fatalf("%+v:\n%s", rep.Open, text)
	}
	if !strings.Contains(buf.String(), `"kind":"journal_open","at":"`) || !strings.Contains(buf.String(), `"session":"s2","follows":"s1"}`) {
		t.Errorf("no follows on the journal_open:\n%s", buf.String())
	}
	// The old id again, in a file: the session is opened as s1~1,
	// following s1.
	again, err := Open(path, &Options{Clock: clock, Session: "s1", Follows: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.Call(ctx, echo, request(t, "c3", `{"system": ["You are careful."]}`)); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || !bytes.Contains(data, []byte(`"session":"s1~1","follows":"s1"}`)) {
		t.Errorf("%v:\n%s", err, data)
	} else if rep, text := reportOf(t, string(data), nil); !rep.Holds() || len(rep.Open) != 2 {
		t.Errorf("s1~1 following s1:\n%s", text)
	}
	// Following itself, or a session still open, breaks the rule.
	for name, bad := range map[string]string{
		"itself":    rechain(strings.Replace(buf.String(), `"follows":"s1"`, `"follows":"s2"`, 1)),
		"not a str": rechain(strings.Replace(buf.String(), `"follows":"s1"`, `"follows":1`, 1)),
	} {
		rep, text := reportOf(t, bad, nil)
		if rep.Holds() || !hasRule(rep, transcript.RuleFollows) {
			t.Errorf("%s:\n%s", name, text)
		}
	}
	both := filepath.Join(t.TempDir(), "both.jsonl")
	for _, o := range []*Options{{Clock: clock, Session: "a"}, {Clock: clock, Session: "b", Follows: "a"}} {
		j, err := Open(both, o)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		if _, err := j.Call(ctx, echo, request(t, "c", `{"system": ["You are careful."]}`)); err != nil {
			t.Fatal(err)
		}
	}
	data, err = os.ReadFile(both)
	if err != nil {
		t.Fatal(err)
	}
	if rep, text := reportOf(t, string(data), nil); rep.Holds() || !hasRule(rep, transcript.RuleFollows) {
		t.Errorf("following a session still open:\n%s", text)
	}
}

// A request refused (a body that does not read) is a line of the
// transcript, with its reason and the digest of the bytes received, and
// the transcript verifies; a refusal altered, or malformed, does not.
func TestARefusalIsOnTheRecord(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "s1"})
	body := []byte(`{"model": "x", "messages": [` + "\xff")
	if err := j.Refuse(ctx, "", "malformed", "the request body is not JSON: unexpected end (byte 28)", body); err != nil {
		t.Fatal(err)
	}
	if err := j.Refuse(ctx, "c", "Bad Reason", "x", nil); err == nil {
		t.Error("a reason that is not a code is written")
	}
	if _, err := j.Call(ctx, echo, request(t, "c1", `{"system": ["You are careful."]}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	tx := buf.String()
	if strings.Contains(tx, "\xff") || strings.Contains(tx, `"model"`) {
		t.Fatalf("the refused body is kept:\n%s", tx)
	}
	rep, text := reportOf(t, tx, nil)
	want := transcript.Refusal{Line: 2, Session: "s1", Reason: "malformed", Message: "the request body is not JSON: unexpected end (byte 28)", BodyBytes: int64(len(body)), BodyContentHash: digest.Bytes(body).String()}
	if !rep.OK() || len(rep.Refused) != 1 || rep.Refused[0] != want {
		t.Fatalf("%+v:\n%s", rep.Refused, text)
	}
	if !strings.Contains(text, "REFUSED line 2: session s1: malformed: the request body is not JSON") || !strings.Contains(text, ", 1 refused") {
		t.Errorf("not shown:\n%s", text)
	}
	// A refusal alone is a record: it verifies.
	var alone bytes.Buffer
	ja := New(&alone, &Options{Clock: clock, Session: "s1"})
	if err := ja.Refuse(ctx, "c9", "over_limit", "the body is over the limit", body); err != nil {
		t.Fatal(err)
	}
	ja.Close()
	if rep, text := reportOf(t, alone.String(), nil); !rep.OK() || rep.Refused[0].Call != "c9" {
		t.Errorf("a refusal alone:\n%s", text)
	}
	for name, bad := range map[string]string{
		"altered":         strings.Replace(tx, `"body_bytes":29`, `"body_bytes":30`, 1),
		"reason":          rechain(strings.Replace(tx, `"reason":"malformed"`, `"reason":"Malformed!"`, 1)),
		"body_bytes":      rechain(strings.Replace(tx, `"body_bytes":29`, `"body_bytes":"29"`, 1)),
		"hash":            rechain(strings.Replace(tx, `"body_content_hash":"blake3:`, `"body_content_hash":"md5:`, 1)),
		"another session": rechain(strings.Replace(tx, `"session":"s1","reason"`, `"session":"s9","reason"`, 1)),
	} {
		if rep, text := reportOf(t, bad, nil); rep.OK() || rep.Holds() {
			t.Errorf("%s: verifies:\n%s", name, text)
		}
	}
}
