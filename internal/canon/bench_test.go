package canon

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

// The parser's cursor visits each input byte once: reading a document nested
// d deep takes as many steps as reading it flat, counted as the number of
// values built (a re-scanning reader builds each inner value once per
// enclosing level).
func TestParseBuildsEachValueOnce(t *testing.T) {
	for _, depth := range []int{1, 10, 1000} {
		doc := nested(200_000, depth)
		v, err := parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		var count func(v *value) int
		count = func(v *value) int {
			n := 1
			for i := range v.kids {
				n += count(&v.kids[i])
			}
			return n
		}
		// each item is an object and two strings; each level an array; one 0
		tokens := strings.Count(string(doc), `"role"`)*3 + depth + 1
		if got := count(&v); got != tokens {
			t.Errorf("depth %d: %d values for %d tokens", depth, got, tokens)
		}
	}
}
