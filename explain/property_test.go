package explain

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/manifest"
)

// TestManifestAlwaysValidates is the property that lets Explain skip
// hashing its prompt a second time: on random Harn-shaped options (secrets,
// gates, buckets, registers; half of them under a byte budget of a random
// size), every manifest Explain returns passes the full manifest.Validate
// against its own prompt, digests included, and New (which runs it) agrees.
// Where Explain refuses, it is for a rule ValidateStructure checks.
func TestManifestAlwaysValidates(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 43))
	checked := 0
	for i := range 3000 {
		data, err := json.Marshal(randOptions(r))
		if err != nil {
			t.Fatal(err)
		}
		var opts *Options
		if r.IntN(2) == 0 {
			b := &budget.Budget{Counter: budget.Bytes(), Total: r.IntN(len(data) + 1)}
			opts = &Options{Budget: b}
		}
		e, err := Explain(data, opts)
		if errors.Is(err, budget.ErrExceeded) {
			continue
		}
		if err != nil {
			var dup *manifest.RuleError // duplicate_segment
			if !errors.As(err, &dup) {
				t.Fatalf("case %d: Explain(%s, nil): %v", i, data, err)
			}
			continue
		}
		if err := manifest.Validate(e.Manifest, e.System); err != nil {
			t.Fatalf("case %d: options %s: explain's manifest does not validate: %v", i, data, err)
		}
		if _, err := fromReduction(e.Reduction, e.Manifest); err != nil {
			t.Fatalf("case %d: New: %v", i, err)
		}
		checked++
	}
	if checked < 1000 {
		t.Fatalf("only %d of 3000 cases reached Validate", checked)
	}
}

// located is the rule a whole-digest error located (Validate reports the
// whole digest first, as Harn does), or err itself.
func located(err error) error {
	var whole *manifest.RuleError // whole_prompt_digest
	if errors.As(err, &whole) && whole.Located != nil {
		return whole.Located
	}
	return err
}

// TestValidateStructureCatchesDrift: the structural check is no weaker
// than Validate on what it claims to check. A manifest whose prompt lost
// a separator fails both with the same rule.
func TestValidateStructureCatchesDrift(t *testing.T) {
	e, err := Explain([]byte(`{"system":["one","two"]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	drifted := "one\n-two"
	for name, check := range map[string]func(*manifest.Manifest, string) error{
		"Validate": manifest.Validate, "ValidateStructure": manifest.ValidateStructure,
	} {
		var sep *manifest.RuleError // join_separator
		if err := located(check(e.Manifest, drifted)); !errors.As(err, &sep) {
			t.Errorf("%s: got %v, want a join_separator error", name, err)
		}
	}
	// A changed byte inside a segment is a digest matter: only Validate sees it.
	if err := manifest.ValidateStructure(e.Manifest, "onE\n\ntwo"); err != nil {
		t.Errorf("ValidateStructure read the bytes: %v", err)
	}
	var dig *manifest.RuleError // segment_digest
	if err := located(manifest.Validate(e.Manifest, "onE\n\ntwo")); !errors.As(err, &dig) {
		t.Errorf("Validate: got %v, want a segment_digest error", err)
	}
}
