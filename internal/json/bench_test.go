package json

import (
	"fmt"
	"strings"
	"testing"
)

// nested returns a document of about size bytes: depth arrays nested in one
// another, each holding strings, the shape of a deep actor_chain.
func nested(size, depth int) []byte {
	per := size / depth
	item := `{"role":"planner","note":"` + strings.Repeat("x", 40) + `"},`
	var b strings.Builder
	for range depth {
		b.WriteString(`[`)
		for n := 0; n+len(item) < per; n += len(item) {
			b.WriteString(item)
		}
	}
	b.WriteString("0")
	b.WriteString(strings.Repeat("]", depth))
	return []byte(b.String())
}

func shapes(size int) map[string][]byte {
	return map[string][]byte{"flat": nested(size, 1), "depth-5000": nested(size, 5000)}
}

// BenchmarkEncodeDepth: the same size flat and nested 5,000 deep
// (go test -bench EncodeDepth -benchmem ./internal/canon).
func BenchmarkEncodeDepth(b *testing.B) {
	for _, name := range []string{"flat", "depth-5000"} {
		doc := shapes(5 << 20)[name]
		b.Run(fmt.Sprintf("%s-%dKB", name, len(doc)>>10), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Encode(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
