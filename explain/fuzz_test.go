package explain

import (
	"errors"
	"testing"

	"github.com/promptloom/promptloom/harn/options"
	"github.com/promptloom/promptloom/manifest"
)

// FuzzRoundTrip: for any accepted options, the manifest of the reduction
// validates against its own system bytes, also after being written
// canonically and read back.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{`{"system":["a",{"content":"b","position":"after","title":"t"}]}`,
		`{"system":{"mode":"replace","content":"  x\n"}}`,
		`{"_system_fragments":[{"id":"p","body":"token: abc123"},{"body":"Bearer","bucket":"after"}],"tools":[{"name":"t","guidance":"=x"}]}`,
		`{"system":"https://u:p@h/?token=1","tools":[{"name":"t","guidance":"https://x/?secret=2"}]}`,
		`{"context_profile":{"prompt_fragments":[{"body":"-----BEGIN A PRIVATE KEY-----"}]},"system":["-----END A PRIVATE KEY-----"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Explain(data, nil)
		if err != nil {
			var oe *options.Error
			if !errors.As(err, &oe) && !errors.Is(err, manifest.ErrInvalid) {
				t.Fatalf("Explain error %T: %v", err, err)
			}
			return
		}
		if err := manifest.Validate(e.Manifest, e.System); err != nil {
			t.Fatalf("manifest does not hold for its own prompt: %v", err)
		}
		c, err := e.Manifest.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		back, err := manifest.Read(c)
		if err != nil {
			t.Fatalf("manifest does not read back: %v", err)
		}
		if err := manifest.Validate(back, e.System); err != nil {
			t.Fatalf("manifest read back does not hold: %v", err)
		}
	})
}
