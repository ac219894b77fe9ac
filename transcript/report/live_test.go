package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transcript/report"
)

// A run still being written is shown open, with its calls so far, and
// its open session is not a failure; a refusal is shown with its reason.
func TestAnOpenRunIsShownOpen(t *testing.T) {
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Clock: clock, Session: "s1"})
	if err := j.Refuse(ctx, "", "malformed", "the request body is not JSON", []byte("{")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"c1", "c2"} {
		if _, err := j.Call(ctx, echo, request(t, c, `{"system": ["You are careful."]}`)); err != nil {
			t.Fatal(err)
		}
	}
	rep, page := renderRun(t, buf.String()) // not closed
	if !rep.Holds() || rep.OK() {
		t.Fatalf("holds %v ok %v", rep.Holds(), rep.OK())
	}
	for _, w := range []string{"open: session s1 with 2 call(s) so far; verified through line 8", "OPEN session s1 (line 1) is open", "REFUSED line 2: session s1: malformed: the request body is not JSON (1 bytes received, blake3:", ", 1 refused"} {
		if !bytes.Contains(page, []byte(w)) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if bytes.Contains(page, []byte("FAIL")) {
		t.Errorf("an open run is shown failing:\n%s", page)
	}
	var text strings.Builder
	if err := report.WriteText(&text, rep, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "open: session s1 with 2 call(s) so far; verified through line 8") || strings.Contains(text.String(), "FAIL") {
		t.Errorf("text:\n%s", text.String())
	}
	// The same run with a reply altered fails, on the page too.
	if _, page := renderRun(t, strings.Replace(buf.String(), "reply to c1", "reply to cX", 1)); !bytes.Contains(page, []byte("FAIL")) || bytes.Contains(page, []byte(`id="open"`)) {
		t.Errorf("an altered open run is not shown failing")
	}
}
