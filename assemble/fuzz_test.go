package assemble

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/request"
)

// FuzzAssemble: whatever the file, Read and Assemble return a body or an
// *Error, never panic, and a body reads back as its provider's and fits
// its window as counted.
func FuzzAssemble(f *testing.F) {
	// OpenAI's vectors are left out of the seeds: under the fuzzer's
	// instrumentation, building the o200k_base tokenizer takes minutes.
	inputs, _ := filepath.Glob("testdata/vectors/anthropic*/input.json")
	inputs = append(inputs, "testdata/vectors/gemini/input.json", "testdata/vectors/error-nofit/input.json")
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Read(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("not an *Error: %v", err)
			}
			return
		}
		r, err := assembled(c, nil)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("not an *Error: %v", err)
			}
			return
		}
		if r.Manifest.Tokens+c.OutputReserve > c.Window {
			t.Fatalf("%d tokens and %d reserved, over the window of %d", r.Manifest.Tokens, c.OutputReserve, c.Window)
		}
		if _, err := newManifest(r.Body, c.Provider, &request.Options{Model: c.Model}); err != nil && c.Provider != payload.Gemini {
			t.Fatalf("the body does not read back: %v\n%s", err, r.Body)
		}
	})
}
