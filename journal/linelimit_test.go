package journal

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
)

// The journal writes no line its verifier would refuse: a request whose
// line is over MaxLineBytes is refused before it is made, a reply whose
// body would make the line too long keeps its summary, and one whose
// summary alone is too long is recorded as a failed call, saying why.
// The transcript verifies under the same limit.
func TestNoLineOverTheLimit(t *testing.T) {
	const limit = 4096
	var buf bytes.Buffer
	j := New(&buf, &Options{Session: "s", MaxLineBytes: limit})
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
	if _, err := j.Call(context.Background(), reply(Response{Text: strings.Repeat("y", limit)}), Request{Call: "text", Body: small, Unattributed: true}); err != nil {
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
	rep, err := Verify(bytes.NewReader(buf.Bytes()), &Options{MaxLineBytes: limit})
	if err != nil || !rep.OK() || len(rep.Calls) != 2 {
		var w strings.Builder
		rep.WriteText(&w)
		t.Fatalf("verify: %v\n%s", err, w.String())
	}
}

// A file of garbage is a bounded report: the first problems listed, the
// rest counted, whatever the file's length.
func TestProblemsAreBounded(t *testing.T) {
	garbage := strings.Repeat("{}\n", 50_000)
	rep, err := Verify(strings.NewReader(garbage), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Problems) != maxProblems+1 {
		t.Fatalf("%d problems listed", len(rep.Problems))
	}
	last := rep.Problems[maxProblems]
	if last.Rule != "too_many_problems" || !strings.Contains(last.Detail, "more problem(s) from line") {
		t.Errorf("the last problem: %+v", last)
	}
	allocs := testing.AllocsPerRun(1, func() { Verify(strings.NewReader(garbage), nil) })
	if perLine := allocs / 50_000; perLine > 20 {
		t.Errorf("%.0f allocations a line of garbage", perLine)
	}
}
