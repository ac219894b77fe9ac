package journal

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/transcript"
	"github.com/tidwall/gjson"
)

// lines splits a transcript into its lines, newline kept.
func lines(tx string) []string {
	return strings.SplitAfter(strings.TrimSuffix(tx, "\n"), "\n")
}

func join(ls []string) string {
	s := strings.Join(ls, "")
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

func reportText(t *testing.T, tx string) (string, bool) {
	t.Helper()
	rep, err := transcript.Verify(strings.NewReader(tx), nil)
	var b strings.Builder
	rep.WriteText(&b)
	if err != nil {
		b.WriteString(err.Error())
	}
	return b.String(), err == nil && rep.OK()
}

// Each edit an auditor might make to a recorded transcript, every one of
// which verified before the chain: each must now fail, naming the line and
// what broke. The transcript is recorded() (lines: 1 journal_open,
// 2 system_prompt, 3 context_manifest, 4-5 call c1, 6-7 call c2,
// 8 system_prompt, 9 context_manifest, 10-11 call c3, 12 journal_close).
// Where a forger could recompute the chain (rechained), the receipts must
// still catch the edit.
func TestEditsThatMustFail(t *testing.T) {
	orig := recorded(t)
	if text, ok := reportText(t, orig); !ok {
		t.Fatalf("the unedited transcript does not verify:\n%s", text)
	}
	ls := lines(orig)
	if len(ls) != 12 {
		t.Fatalf("recorded %d lines, want 12", len(ls))
	}
	without := func(drop ...int) string {
		var out []string
		for i, l := range ls {
			keep := true
			for _, d := range drop {
				keep = keep && i+1 != d
			}
			if keep {
				out = append(out, l)
			}
		}
		return join(out)
	}
	with := func(at int, extra string) string { // extra goes after line at
		out := append(append(append([]string{}, ls[:at]...), extra), ls[at:]...)
		return join(out)
	}
	for _, tc := range []struct {
		name, tx string
		want     []string // each must appear in the report
	}{
		{"empty file", "", []string{"empty transcript", "0 call(s) verified"}},
		{"only blank lines", "\n\n", []string{"no call verified"}},
		{"a blank line inside", with(5, "\n"), []string{"line 6: blank line", "line 7: chain broken"}},
		{"last call deleted", without(10, 11), []string{"line 10: chain broken", "closes with 3 call(s), but 2"}},
		{"last call deleted, rechained", rechain(without(10, 11)), []string{"closes with 3 call(s), but 2"}},
		{"last call and close deleted", without(10, 11, 12), []string{"no journal_close yet"}},
		{"middle call deleted", without(6, 7), []string{"line 6: chain broken"}},
		{"middle call deleted, rechained", rechain(without(6, 7)), []string{"closes with 3 call(s), but 2", "line 6: seq 8, want 6"}},
		{"request duplicated", with(4, ls[3]), []string{"line 5: chain broken", "line 5: seq 4, want 5"}},
		{"request replayed at the end", orig + ls[3], []string{"line 13: chain broken", "line 13: seq 4, want 13"}},
		{"request replayed at the end, rechained", rechain(orig + ls[3]), []string{"session \"s1\" is not open"}},
		{"response rewritten", strings.Replace(orig, "reply to c2", "The UK concedes everything.", 1),
			[]string{"line 8: chain broken"}},
		{"response rewritten, rechained", rechain(strings.Replace(orig, "reply to c2", "The UK concedes everything.", 1)),
			[]string{"the response at line 7 does not hash to its response_content_hash"}},
		{"call renamed", strings.Replace(orig, `"call":"c2","served`, `"call":"c9","served`, 1), []string{"line 7: chain broken"}},
		{"call renamed, rechained", rechain(strings.Replace(orig, `"call":"c2","served`, `"call":"c9","served`, 1)),
			[]string{`the response at line 7 names call "c2"`}},
		{"seq changed", rechain(strings.Replace(orig, `"seq":6,`, `"seq":60,`, 1)), []string{"line 6: seq 60, want 6"}},
		{"messages hash deleted, messages rewritten", rechain(strings.Replace(
			strings.Replace(orig, `"messages_content_hash":"`+gjsonField(ls[3], "served_context.messages_content_hash")+`",`, "", 1),
			`"hello c1"`, `"hello, it is all agreed"`, 1)),
			[]string{"line 4: call c1 (seq 4): call does not verify: served_context has no messages_content_hash (request.messages is retained)"}},
		// promptloom's JSON reader takes the first of two keys, others the last.
		{"system_prompt with a second content key", rechain(strings.Replace(orig, `,"content_hash":`, `,"content":"Obey the user.","content_hash":`, 1)),
			[]string{"line 2: duplicate JSON key content"}},
		{"duplicate key deep in a request", rechain(strings.Replace(orig, `"role":"user"}`, `"role":"user","role":"system"}`, 1)),
			[]string{"line 4: duplicate JSON key request.messages[0].role"}},
		{"an unknown kind where a call is expected", with(5, `{"prev":"x","seq":6,"kind":"tool_call","name":"grep"}`+"\n"),
			[]string{`line 6: unknown kind "tool_call"`}},
		{"a response deleted", rechain(without(7)), []string{"INCOMPLETE line 6: call c2", "1 incomplete"}},
		{"not a transcript", `{"hello":"world"}` + "\n", []string{"line 1: unknown format"}},
		{"the chain.Genesis changed", "{" + `"prev":"blake3:11",` + ls[0][len(`{"prev":"`+chain.Genesis+`",`):] + join(ls[1:]), []string{"line 1: chain broken"}},
		{"a torn last line", orig + `{"prev":"`, []string{"line 13 is not whole yet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if dir := os.Getenv("PROMPTLOOM_DUMP_EDITS"); dir != "" { // to run another verifier on them
				os.WriteFile(filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".jsonl"), []byte(tc.tx), 0o644)
			}
			text, ok := reportText(t, tc.tx)
			if ok {
				t.Fatalf("the edit verifies:\n%s", text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("report lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

// A model that fails: its error is the call's recorded outcome, with its
// own content hash, and the call verifies; the secret in the error is
// redacted before it is written.
func TestErrorOutcomeIsRecorded(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "s1"})
	failing := ModelFunc(func(context.Context, Request) (Response, error) {
		return Response{}, errors.New("upstream 500 for key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789")
	})
	if _, err := j.Call(ctx, failing, request(t, "c1", `{"system": "x"}`)); err == nil {
		t.Fatal("the model's error was lost")
	}
	j.Close()
	if strings.Contains(buf.String(), "abcdefghijklmnop") || !strings.Contains(buf.String(), `"kind":"provider_call_error"`) {
		t.Errorf("transcript:\n%s", buf.String())
	}
	if text, ok := reportText(t, buf.String()); !ok {
		t.Errorf("a recorded failure does not verify:\n%s", text)
	}
	edited := rechain(strings.Replace(buf.String(), "upstream 500", "upstream 200", 1))
	if text, ok := reportText(t, edited); ok || !strings.Contains(text, "error_content_hash") {
		t.Errorf("an edited error verifies:\n%s", text)
	}
}

func TestLineCap(t *testing.T) {
	_, err := transcript.Verify(strings.NewReader(recorded(t)), &transcript.Options{MaxLineBytes: 200})
	var long *chain.LineTooLong
	if !errors.As(err, &long) || long.Line != 2 || long.Limit != 200 || !errors.Is(err, promptloom.ErrTooLarge) {
		t.Errorf("Verify = %v, want line 2 over 200 bytes", err)
	}
}

func gjsonField(line, path string) string { return gjson.Get(line, path).String() }

// A line cut out of the middle is one seq problem, where it was cut: the
// lines after it are counted on from their own seq, so the report does not
// bury the cut under a problem at every later line.
func TestALineCutOutIsOneSeqProblem(t *testing.T) {
	ls := lines(recorded(t))
	cut := join(append(append([]string{}, ls[:7]...), ls[8:]...)) // line 8, a system_prompt
	rep, err := transcript.Verify(strings.NewReader(cut), nil)
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, p := range rep.Problems {
		if p.Rule == transcript.RuleSeq {
			seq = append(seq, p.Detail)
		}
	}
	if len(seq) != 1 || seq[0] != "line 8: seq 9, want 8" {
		t.Errorf("seq problems %q, want the one at line 8", seq)
	}
}
