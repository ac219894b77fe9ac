package budget

import (
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// The counters agree with tiktoken-go's own count.
func TestCountersMatchTiktoken(t *testing.T) {
	text := "Keep the todo list current: add a task before you start it.\n\n日本語 🎉 it's 12345"
	for _, enc := range []string{encodingO200k, encodingCl100k} {
		c, _ := NewCounter(enc)
		codec, err := tokenizer.Get(tokenizer.Encoding(enc))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := codec.Count(text)
		if got := c.Count(text); got != want || got == 0 {
			t.Errorf("%s: %d, tiktoken %d", enc, got, want)
		}
	}
	if _, err := NewCounter("p50k"); err == nil {
		t.Error("NewCounter accepted an unknown encoding")
	}
}
