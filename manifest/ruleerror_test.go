package manifest_test

import (
	"encoding/json"
	"testing"

	"github.com/promptloom/promptloom/manifest"
)

// A broken rule's JSON (verify --format json prints it) is in the
// project's lower-case names, with the empty fields left out.
func TestRuleErrorJSON(t *testing.T) {
	e := &manifest.RuleError{Rule: "segment_digest", ID: "env", Offset: 12, Want: "blake3:aa", Got: "blake3:bb", Detail: "d",
		Located: &manifest.RuleError{Rule: "join_separator", Offset: -1, Detail: "j"}}
	got, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"rule":"segment_digest","id":"env","offset":12,"want":"blake3:aa","got":"blake3:bb","detail":"d","located":{"rule":"join_separator","offset":-1,"detail":"j"}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
