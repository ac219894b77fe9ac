package explain

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/internal/textsafe"
)

// checkText fails when out holds a control character other than a newline,
// a bidirectional control, or bytes that are not UTF-8.
func checkText(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s: not UTF-8:\n%q", what, out)
	}
	for _, r := range out {
		if r != '\n' && !textsafe.Safe(r) {
			t.Fatalf("%s: %U reached the output:\n%q", what, r, out)
		}
	}
}

// tableLines is the number of lines of WriteText's output after the
// prompt's closing fence.
func tableLines(out string) int {
	const fence = "────────────────────────────────────────\n"
	if i := strings.LastIndex(out, fence); i >= 0 {
		out = out[i+len(fence):]
	}
	return strings.Count(out, "\n")
}

// Ids, titles and bodies holding newlines, tabs, ESC sequences and bidi
// controls are escaped in every text rendering: the table keeps one row per
// fragment, and ordinary ids print unchanged.
func TestTextRenderingsEscapeControlCharacters(t *testing.T) {
	hostile := `{"_system_fragments":[{"id":"x\n2  forged\u001b[2J","body":"hi \u001b[31m there\ttab\r!"}],` +
		`"system":[{"content":"a","title":"t\u202e"},"plain"]}`
	x, err := Explain([]byte(hostile), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := x.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	checkText(t, "WriteText", out.String())
	if got, want := tableLines(out.String()), 2+len(x.Fragments); got != want {
		t.Errorf("the table has %d lines, want %d (a header and one per fragment):\n%s", got, want, out.String())
	}
	for _, want := range []string{`x\n2  forged\x1b[2J`, `hi \x1b[31m there\ttab\r!`, `## t\u202e`, "  system[0]  "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("WriteText lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := x.WriteTraces(&out); err != nil {
		t.Fatal(err)
	}
	checkText(t, "WriteTraces", out.String())

	plain, err := Explain([]byte(`{"system":["plain"]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := Diff(plain, x, "a\x1b]0;owned\a.json", "b\n+++ forged")
	out.Reset()
	if err := d.WriteText(&out, "a\x1b]0;owned\a.json", "b\n+++ forged"); err != nil {
		t.Fatal(err)
	}
	checkText(t, "Delta.WriteText", out.String())
	if strings.Contains(out.String(), "\n+++ forged") {
		t.Errorf("a name forged a line of the diff:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `+++ b\n+++ forged`) {
		t.Errorf("the B name is not escaped on its line:\n%s", out.String())
	}
}

// The budget table's count column is headed by the counter's unit: TOKENS
// for a token vocabulary; under the bytes counter the count is the BYTES
// column itself, shown once (the table used to say TOKENS for bytes).
func TestBudgetColumnFollowsTheCounter(t *testing.T) {
	opts := []byte(`{"system": ["You are careful.", "Answer in English."]}`)
	for counter, want := range map[string]string{"bytes": "", "o200k_base": "TOKENS", "cl100k_base": "TOKENS"} {
		c, err := budget.NewCounter(counter)
		if err != nil {
			t.Fatal(err)
		}
		x, err := Explain(opts, &Options{Budget: &budget.Budget{Counter: c, Total: 1000}})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := x.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		var head string
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "#  ID") {
				head = l
			}
		}
		fields := strings.Fields(head)
		if got := strings.Join(fields[6:len(fields)-2], " "); got != strings.TrimSpace("BYTES "+want) {
			t.Errorf("%s: the columns after OFFSET are %q:\n%s", counter, got, b.String())
		}
	}
}

// The text shows the reminders' trailing message and a row a directive:
// they are sent, though not in the system prompt; a body's escape
// sequence is escaped there as everywhere.
func TestTextShowsReminders(t *testing.T) {
	for _, opts := range []string{
		`{"system":"x","reminders":[{"body":"Run <tests>.\u001b[2J","ttl_turns":2}]}`,
		`{"reminders":[{"body":"Run <tests>.\u001b[2J","ttl_turns":2}]}`, // no system prompt
	} {
		e, err := Explain([]byte(opts), nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := e.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		checkText(t, opts, out)
		if !strings.Contains(out, "reminders: 1 directive(s) in a trailing user message") || !strings.Contains(out, `<directive authority="contract" ttl_turns="2">`) {
			t.Errorf("%s: no reminders in the text:\n%s", opts, out)
		}
	}
}
