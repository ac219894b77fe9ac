package journal

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/transcript"
)

// The journal writes no line its verifier would refuse: a request whose
// line is over MaxLineBytes is refused before it is made, a reply whose
// body would make the line too long keeps its summary, and one whose
// summary alone is too long is recorded as a failed call, saying why.
// The transcript verifies under the same limit.
func TestNoLineOverTheLimit(t *testing.T) {
	const limit = 4096
	var buf bytes.Buffer
	signer, verifier := keys(t, "k")
	j := New(&buf, &Options{Session: "s", MaxLineBytes: limit, Signer: signer, CheckpointEvery: 1})
	made := 0
	reply := func(r Response) Model {
		return ModelFunc(func(context.Context, Request) (Response, error) { made++; return r, nil })
	}
	small := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	big := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", limit) + `"}]}`)
	if _, err := j.Call(context.Background(), reply(Response{Text: "ok"}), Request{Call: "big", Body: big, Unattributed: true}); !errors.Is(err, promptloom.ErrTooLarge) || made != 0 {
		t.Fatalf("a request line over the limit: %v, made %d times", err, made)
	}
	longBody := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat(`\"`, limit) + `"}]}`)
	if _, err := j.Call(context.Background(), reply(Response{Text: "ok", Body: longBody}), Request{Call: "body", Body: small, Unattributed: true}); err != nil {
		t.Fatal(err)
	}
	// Recorded as failed, and the caller told so: it must not act on a
	// reply the transcript does not hold.
	if _, err := j.Call(context.Background(), reply(Response{Text: strings.Repeat("y", limit)}), Request{Call: "text", Body: small, Unattributed: true}); !errors.Is(err, promptloom.ErrTooLarge) {
		t.Fatalf("a reply too long even without its body: %v", err)
	}
	// An attempt's failure too long for a line is cut, and the call still
	// ends once.
	p, err := j.Begin(context.Background(), Request{Call: "retried", Body: small, Unattributed: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Attempt(context.Background(), 500, errors.New(strings.Repeat("e", 2*limit))); err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(context.Background(), Response{Text: "ok"}, nil); err != nil {
		t.Fatal(err)
	}
	// Even cut, an attempt of a long-named call whose message escapes six
	// times over is too long: it is not recorded, the caller is told, and
	// the call still ends.
	long := strings.Repeat("n", 1500)
	if p, err = j.Begin(context.Background(), Request{Call: long, Body: small, Unattributed: true}); err != nil {
		t.Fatal(err)
	}
	if err := p.Attempt(context.Background(), 500, errors.New(strings.Repeat("\x01", limit))); !errors.Is(err, promptloom.ErrTooLarge) || !strings.Contains(err.Error(), "the attempt is not recorded") {
		t.Fatalf("an attempt line over the limit: %v", err)
	}
	if err := p.Finish(context.Background(), Response{Text: "ok"}, nil); err != nil {
		t.Fatal(err)
	}
	j.Close()
	for i, line := range bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n")) {
		if len(line) > limit {
			t.Errorf("line %d is %d bytes", i+1, len(line))
		}
	}
	if strings.Contains(buf.String(), `"call":"big"`) || !strings.Contains(buf.String(), "over the transcript's limit of 4096") {
		t.Errorf("transcript:\n%s", buf.String())
	}
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), &transcript.Options{MaxLineBytes: limit, Verifier: verifier})
	if err != nil || !rep.OK() || len(rep.Calls) != 4 {
		var w strings.Builder
		rep.WriteText(&w)
		t.Fatalf("verify: %v\n%s", err, w.String())
	}
}

// A file of garbage is a bounded report: the first problems listed, the
// rest counted, whatever the file's length.
func TestProblemsAreBounded(t *testing.T) {
	garbage := strings.Repeat("{}\n", 50_000)
	rep, err := transcript.Verify(strings.NewReader(garbage), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Problems) != maxProblems+1 {
		t.Fatalf("%d problems listed", len(rep.Problems))
	}
	last := rep.Problems[maxProblems]
	if last.Rule != transcript.RuleTooManyProblems || !strings.Contains(last.Detail, "more problem(s) from line") {
		t.Errorf("the last problem: %+v", last)
	}
	// A problem a line, and "no call verified".
	var w strings.Builder
	rep.WriteText(&w)
	if !strings.Contains(w.String(), "; 50001 problem(s) with the transcript") {
		t.Errorf("summary: %s", lastLines(w.String(), 3))
	}
	allocs := testing.AllocsPerRun(1, func() { transcript.Verify(strings.NewReader(garbage), nil) })
	if perLine := allocs / 50_000; perLine > 20 {
		t.Errorf("%.0f allocations a line of garbage", perLine)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
