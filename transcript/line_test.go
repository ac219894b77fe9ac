package transcript

import (
	"errors"
	"testing"

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
