package journal

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/transcript"
)

// TestHarnPlaceholderKeepsStructuralChecks: a Harn prompt retained with a
// redaction placeholder cannot have the digest of the segment holding the
// placeholder checked, and nothing else is skipped: a duplicate included
// (id, digest), bytes that do not add up, a digest of text that is not
// there, a bad separator each still fail.
func TestHarnPlaceholderKeepsStructuralChecks(t *testing.T) {
	const first = "Hello <redacted:openai_key:49> world" // 6 + 49 + 6 bytes sent
	const sentFirst = 6 + 49 + 6
	retained := first + "\n\nSecond part."
	sent := sentFirst + 2 + len("Second part.")
	segment := func(id, text string, bytes int) obj {
		return obj{"id": id, "producer": "test", "bucket": "before", "included": true,
			"reason": "internal typed prompt root", "bytes": bytes, "digest": harnHash(text)}
	}
	manifestFor := func(segs []obj, count int) obj {
		mf := harnManifest("x", retained)
		mf["segments"], mf["system_prompt_bytes"], mf["join_separator_count"] = segs, sent, count
		return mf
	}
	for _, tc := range []struct {
		name, system string
		mf           obj
		ok           bool
		rule         string
	}{
		{"the manifest holds", retained,
			manifestFor([]obj{segment("a", first, sentFirst), segment("b", "Second part.", 12)}, 1), true, ""},
		{"a duplicate included (id, digest)", retained,
			manifestFor([]obj{segment("a", first, sentFirst), segment("a", first, 12)}, 1), false, "duplicate_segment"},
		{"bytes that do not add up", retained,
			manifestFor([]obj{segment("a", first, sentFirst-1), segment("b", "Second part.", 12)}, 1), false, "byte_count"},
		{"the digest of text that is not there", retained,
			manifestFor([]obj{segment("a", first, sentFirst), segment("b", "Another part", 12)}, 1), false, "segment_digest"},
		{"a separator that is not there", first + "::Second part.",
			manifestFor([]obj{segment("a", first, sentFirst), segment("b", "Second part.", 12)}, 1), false, "join_separator"},
		{"a join count that is wrong", retained,
			manifestFor([]obj{segment("a", first, sentFirst), segment("b", "Second part.", 12)}, 0), false, "join_separator_count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w harnWriter
			tc.mf["whole_prompt_digest"] = harnHash(tc.system)
			w.call(1, "c1", tc.system, tc.mf, nil, nil)
			tx := strings.Replace(w.buf.String(), fmtInt("system_prompt_bytes", len(tc.system)), fmtInt("system_prompt_bytes", sent), 1)
			rep, err := transcript.Verify(strings.NewReader(tx), nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() != tc.ok {
				var b strings.Builder
				rep.WriteText(&b)
				t.Fatalf("verifies %v, want %v:\n%s", rep.OK(), tc.ok, b.String())
			}
			if !tc.ok && string(rep.Calls[0].Problem.Rule) != tc.rule {
				t.Errorf("rule %s (%s), want %s", rep.Calls[0].Problem.Rule, rep.Calls[0].Problem.Detail, tc.rule)
			}
		})
	}
}

// A placeholder's length comes from the file: one claiming a gigabyte in
// a line of a few kilobytes is refused, in the memory of the line, rather
// than laid out.
func TestPlaceholderClaimingTooMuchIsRefused(t *testing.T) {
	n := 1_000_000_000
	first := "Hello <redacted:openai_key:" + strconv.Itoa(n) + "> world"
	sentFirst := 6 + n + 6
	retained := first + "\n\nSecond part."
	sent := sentFirst + 2 + len("Second part.")
	seg := func(id, text string, bytes int) obj {
		return obj{"id": id, "producer": "test", "bucket": "before", "included": true, "reason": "internal typed prompt root", "bytes": bytes, "digest": harnHash(text)}
	}
	mf := harnManifest("x", retained)
	mf["segments"], mf["system_prompt_bytes"], mf["join_separator_count"] = []obj{seg("a", first, sentFirst), seg("b", "Second part.", 12)}, sent, 1
	mf["whole_prompt_digest"] = harnHash(retained)
	var w harnWriter
	w.call(1, "c1", retained, mf, nil, nil)
	tr := strings.Replace(w.buf.String(), fmtInt("system_prompt_bytes", len(retained)), fmtInt("system_prompt_bytes", sent), 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep, err := transcript.Verify(strings.NewReader(tr), nil)
	runtime.ReadMemStats(&after)
	if err != nil || rep.OK() || rep.Calls[0].Problem == nil || rep.Calls[0].Problem.Rule != transcript.RuleRedactedLength {
		t.Fatalf("a gigabyte claimed in %d bytes: %v %+v", len(tr), err, rep)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("verifying allocated %d bytes", grew)
	}
}
