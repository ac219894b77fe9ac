package manifest

import (
	"bytes"
	"testing"
)

// TestReadKeepsNothingOfItsInput: Read parses its argument where it lies,
// so every string it keeps must be a copy: overwriting the document after
// Read changes nothing in the manifest.
func TestReadKeepsNothingOfItsInput(t *testing.T) {
	doc := []byte(`{"schema":"harn.llm.context_manifest.v1","call_role":"agent.main","whole_prompt_digest":"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262","system_prompt_bytes":0,"segments":[{"id":"frag.one","producer":"system","bucket":"before","included":false,"reason":"disabled","bytes":0,"digest":"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262","register":"considered","sources":["event:1"]}]}`)
	m, err := Read(doc)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := m.Canonical()
	for i := range doc {
		if doc[i] >= 'a' && doc[i] <= 'z' {
			doc[i] = 'X'
		}
	}
	if got, _ := m.Canonical(); !bytes.Equal(got, want) {
		t.Fatalf("the manifest changed with the document it was read from:\n%s\nwant\n%s", got, want)
	}
}
