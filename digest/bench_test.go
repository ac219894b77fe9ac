package digest

import (
	"fmt"
	"strings"
	"testing"

	zeebo "github.com/zeebo/blake3"
	luke "lukechampine.com/blake3"
)

// benchSizes are a fragment's, a transcript line's (two), and a large
// response body's.
var benchSizes = []int{390, 6 << 10, 12 << 10, 1 << 20}

// BenchmarkBytes hashes each size with this package and with both BLAKE3
// implementations in go.mod, in one run, so the choice is a ratio.
func BenchmarkBytes(b *testing.B) {
	for _, n := range benchSizes {
		data := []byte(strings.Repeat("Keep the todo list current. ", n/28+1)[:n])
		for _, impl := range []struct {
			name string
			sum  func([]byte) [32]byte
		}{
			{"digest", func(p []byte) [32]byte { return Bytes(p) }},
			{"zeebo", zeebo.Sum256},
			{"lukechampine", luke.Sum256},
		} {
			b.Run(fmt.Sprintf("%s/%d", impl.name, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					impl.sum(data)
				}
			})
		}
	}
}

// BenchmarkParse reads one digest's text: a verifier reads several for
// every call it checks.
func BenchmarkParse(b *testing.B) {
	s := Of("a fragment").String()
	for b.Loop() {
		if _, err := Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}
