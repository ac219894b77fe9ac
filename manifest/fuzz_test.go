package manifest

import (
	"testing"
)

// FuzzReadValidate feeds arbitrary bytes to the tolerant reader and what it
// accepts to Validate: errors are fine, panics are not, and a manifest that
// validates must still validate after a canonical round trip.
func FuzzReadValidate(f *testing.F) {
	f.Add([]byte(`{"schema":"harn.llm.context_manifest.v1","call_role":"r","segments":[{"id":"a","included":true,"bytes":4,"digest":"blake3:de8f3fcf327eb911b2c368e011e0ffdee22fed456b4f4508337018ba46a0639d"}],"whole_prompt_digest":"blake3:de8f3fcf327eb911b2c368e011e0ffdee22fed456b4f4508337018ba46a0639d","system_prompt_bytes":4}`), "base")
	f.Add([]byte(`{"schema":"harn.llm.context_manifest.v1","root":"replacement","segments":[],"whole_prompt_digest":"x","system_prompt_bytes":0}`), "")
	f.Add([]byte(`{"segments":[{"bytes":-1}]}`), "x")
	f.Fuzz(func(t *testing.T, data []byte, system string) {
		m, err := Read(data)
		if err != nil {
			return
		}
		if Validate(m, system) != nil {
			return
		}
		c, err := m.Canonical()
		if err != nil {
			return // an actor_chain that is not canonical JSON (a repeated key)
		}
		back, err := Read(c)
		if err != nil {
			t.Fatalf("canonical form of a valid manifest does not read back: %v\n%s", err, c)
		}
		if err := Validate(back, system); err != nil {
			t.Fatalf("canonical round trip broke validation: %v", err)
		}
	})
}
