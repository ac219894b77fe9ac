package transcript

import (
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/manifest"
)

// Decode names what is wrong with a line by its rule, as Verify would.
func TestDecodeRules(t *testing.T) {
	const good = `{"prev":"blake3:00","seq":1,"kind":"journal_open","at":"2026-01-02T03:04:05Z","session":"s1"}`
	if l, err := Decode([]byte(good)); err != nil || l != (Line{Prev: "blake3:00", Seq: 1, Kind: "journal_open", At: "2026-01-02T03:04:05Z", Session: "s1", Body: l.Body}) || *l.Body.(*Open) != (Open{}) {
		t.Fatalf("Decode = %+v, %v", l, err)
	}
	for _, tc := range []struct {
		line string
		want manifest.Rule
	}{
		{`{"prev":"a","prev":"b"}`, RuleUnreadable},
		{`[1]`, RuleUnreadable},
		{"\xff", RuleUnreadable},
		{`{"seq":1,"kind":"journal_open","at":"2026-01-02T03:04:05Z"}`, RuleChain},
		{`{"prev":"x","seq":1.5,"kind":"journal_open","at":"2026-01-02T03:04:05Z"}`, RuleSeq},
		{`{"prev":"x","seq":1,"kind":"journal_open","at":"yesterday"}`, RuleAt},
		{`{"prev":"x","seq":1,"kind":7,"at":"2026-01-02T03:04:05Z"}`, RuleKind},
		{`{"prev":"x","seq":1,"kind":"journal_end","at":"2026-01-02T03:04:05Z"}`, RuleKind},
	} {
		_, err := Decode([]byte(tc.line))
		var re *manifest.RuleError
		if !errors.As(err, &re) || re.Rule != tc.want {
			t.Errorf("Decode(%s) = %v, want rule %s", tc.line, err, tc.want)
		}
	}
}

// Verify judges a refusal's members as Decode reads them: the same rule,
// the same words.
func TestVerifyReadsRefusalsAsDecode(t *testing.T) {
	open := `{"prev":"` + chain.Genesis + `","seq":1,"kind":"journal_open","at":"2026-01-02T03:04:05Z","session":"s"}`
	const h = `"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"`
	for _, members := range []string{
		`"reason":"Bad","message":"m","body_bytes":1,"body_content_hash":` + h,
		`"reason":"r","message":2,"body_bytes":1,"body_content_hash":` + h,
		`"reason":"r","message":"m","body_bytes":1.5,"body_content_hash":` + h,
		`"reason":"r","message":"m","body_bytes":1,"body_content_hash":"x"`,
		`"reason":"r","message":"m","body_bytes":1,"body_content_hash":` + h + `,"call":[]`,
	} {
		line := `{"prev":"` + chain.LineHash([]byte(open)) + `","seq":2,"kind":"provider_call_refused","at":"2026-01-02T03:04:05Z","session":"s",` + members + `}`
		_, err := Decode([]byte(line))
		var want *manifest.RuleError
		if !errors.As(err, &want) || want.Rule != RuleRefusal {
			t.Fatalf("Decode(%s) = %v, want rule %s", members, err, RuleRefusal)
		}
		rep, _ := Verify(strings.NewReader(open+"\n"+line+"\n"), nil)
		found := false
		for _, p := range rep.Problems {
			if p.Line == 2 {
				found = true
				if p.Rule != want.Rule || p.Detail != "line 2: "+want.Detail {
					t.Errorf("Verify says %s %q of %s; Decode %s %q", p.Rule, p.Detail, members, want.Rule, want.Detail)
				}
			}
		}
		if !found {
			t.Errorf("Verify finds nothing wrong with line 2 (%s): %v", members, rep.Problems)
		}
	}
}
