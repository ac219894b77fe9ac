package transcript

import (
	"strconv"
	"testing"

	"github.com/promptloom/promptloom/digest"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
)

// A body kept whole, as text or as segments is held to its hash the same
// way in a request and in its received, each problem naming where it is.
func TestKeptBodyNamesWhereTheBodyIs(t *testing.T) {
	const sent = `{"model":"m","messages":[]}`
	hash := digest.String(sent).String()
	other := digest.String("another body").String()
	segProblem := callFailed(RuleSegments, "a segment is missing")
	for _, at := range []string{"request", "request.received"} {
		for _, c := range []struct {
			name, obj string
			joined    []byte
			segs      bool
			segErr    *manifest.RuleError
			hash      string
			rule      manifest.Rule
			detail    string
		}{
			{"whole", `{"body":` + sent + `}`, nil, false, nil, hash, "", ""},
			{"whole, altered", `{"body":` + sent + `}`, nil, false, nil, other, RuleBodyContent, at + ".body does not hash to " + at + ".body_content_hash"},
			{"text", `{"body_text":` + strconv.Quote(sent) + `}`, nil, false, nil, hash, "", ""},
			{"text, altered", `{"body_text":` + strconv.Quote(sent) + `}`, nil, false, nil, other, RuleBodyContent, at + ".body_text does not hash to " + at + ".body_content_hash"},
			{"text not a string", `{"body_text":1}`, nil, false, nil, hash, RuleBodyContent, at + ".body_text does not hash to " + at + ".body_content_hash"},
			{"segments", `{"body_segments":[]}`, []byte(sent), true, nil, hash, "", ""},
			{"segments, altered", `{"body_segments":[]}`, []byte(sent), true, nil, other, RuleBodyContent, "the body " + at + ".body_segments make does not hash to " + at + ".body_content_hash"},
			{"segments that do not join", `{"body_segments":[]}`, nil, true, segProblem, hash, RuleSegments, "a segment is missing"},
		} {
			var m pjson.Members
			m.Index(c.obj)
			p := keptBody(at, &m, c.joined, c.segs, c.segErr, c.hash)
			switch {
			case c.rule == "" && p != nil:
				t.Errorf("%s, %s: %v", at, c.name, p)
			case c.rule != "" && (p == nil || p.Rule != c.rule || p.Detail != "call does not verify: "+c.detail):
				t.Errorf("%s, %s: got %+v, want %s: %s", at, c.name, p, c.rule, c.detail)
			}
		}
	}
}
