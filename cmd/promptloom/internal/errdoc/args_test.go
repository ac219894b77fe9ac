package errdoc

import (
	"slices"
	"testing"
)

func TestArgs(t *testing.T) {
	for line, want := range map[string][]string{
		"explain  opts.json":             {"explain", "opts.json"},
		"why 'Keep the list.' opts.json": {"why", "Keep the list.", "opts.json"},
		"why '' opts.json":               {"why", "", "opts.json"},
		"why a'b c'd":                    {"why", "ab cd"},
		"":                               nil,
		"why '  x  '":                    {"why", "  x  "},
	} {
		if got := Args(line); !slices.Equal(got, want) {
			t.Errorf("Args(%q) = %q, want %q", line, got, want)
		}
	}
}
