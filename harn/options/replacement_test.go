package options_test

import (
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/harn/options"
)

// Harn's assemble_system_prompt returns the replacement root before it
// reads _system_fragments or context_profile (its "exclusive replacement
// root": no other contributor participates), so nothing in them is an
// error beside a replacement root, not even a bucket Harn would refuse;
// they are ignored, with a warning.
func TestReplacementRootReadsNoOtherContributor(t *testing.T) {
	o, err := options.Parse([]byte(`{"system": {"mode": "replace", "content": " whole "},
		"_system_fragments": [{"id": "primary:bad", "body": "bad", "bucket": "middle"}],
		"context_profile": {"caps": ["c"], "prompt_fragments": [{"body": "p"}]}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := promptloom.Reduce(o.Fragments(), &promptloom.Options{Tools: o.ActiveTools(), Capabilities: o.Capabilities})
	if err != nil {
		t.Fatal(err)
	}
	if r.System != " whole " || len(r.Rows) != 1 || !r.Rows[0].Fragment.Verbatim {
		t.Errorf("system %q, %d rows, want the replacement root alone", r.System, len(r.Rows))
	}
	var paths []string
	for _, w := range o.Warnings {
		paths = append(paths, w.Path)
	}
	if want := "_system_fragments context_profile.prompt_fragments"; strings.Join(paths, " ") != want {
		t.Errorf("warnings at %v, want at %s", paths, want)
	}
}
