package canon

import (
	"fmt"
	"strings"
	"testing"
	"time"
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

// The cost per byte must not grow with depth: the old writer re-scanned
// every enclosing level (8 s nested against 0.09 s flat at 5 MB). Nested
// 5,000 deep may cost at most 3× flat at the same size (best of several
// runs, to ride out a busy machine).
func TestEncodeIsLinearAtAnyDepth(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	docs := shapes(5 << 20)
	best := map[string]time.Duration{}
	for range 5 {
		for name, doc := range docs {
			start := time.Now()
			if _, err := Encode(doc); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); best[name] == 0 || d < best[name] {
				best[name] = d
			}
		}
	}
	if len(docs["depth-5000"]) < len(docs["flat"])*9/10 || len(docs["depth-5000"]) > len(docs["flat"])*11/10 {
		t.Fatalf("sizes differ: %d, %d", len(docs["flat"]), len(docs["depth-5000"]))
	}
	r := float64(best["depth-5000"]) / float64(best["flat"])
	t.Logf("5 MB: flat %v, nested 5,000 deep %v (%.2f×)", best["flat"], best["depth-5000"], r)
	if r > 3 {
		t.Errorf("nested 5,000 deep took %v, flat %v: %.1f× (want ≤ 3×)", best["depth-5000"], best["flat"], r)
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
