package manifest_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/testkit/benchdata"
	"github.com/promptloom/promptloom/manifest"
)

var sizes = []int{10, 1000, 10000}

var active = &promptloom.Options{Tools: []string{"read", "shell"}}

// prose holds the redaction scanner's anchors (':', ',', 'b', '-') as real
// prompts do, and no secret.
var prose = strings.Fields(`The agent reads the repository before it edits a file and keeps the todo
list current while it works through the plan, step by step. It runs the tests after each change and
reports what failed, with the exact command it used, so that a reviewer can repeat it. When something
is unclear it asks one question rather than guessing, and it never deletes files without asking first.
Use the read tool for files; use the shell tool for commands: prefer small, reviewable changes.`)

// fragments makes n fragments of about 400 bytes of prompt prose each
// (about 4 MB at 10,000): mostly unconditional, a tenth gated on a tool
// that is active, a tenth after the primary block.
func fragments(n int) []promptloom.Fragment {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	out := make([]promptloom.Fragment, n)
	for i := range out {
		f := promptloom.Fragment{ID: fmt.Sprintf("part[%d]", i), Source: "bench", Body: benchdata.Prose(r, prose, 400)}
		switch i % 10 {
		case 3:
			f.RequiresTools = []string{"read"}
		case 7:
			f.Bucket = promptloom.After
		}
		out[i] = f
	}
	return out
}

// BenchmarkReduce is reduce + manifest: the system bytes, one row per
// fragment with its digest, the whole-prompt digest, and the manifest.
func BenchmarkReduce(b *testing.B) {
	for _, n := range sizes {
		frags := fragments(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(promptBytes(frags)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := promptloom.Reduce(frags, active)
				if err != nil {
					b.Fatal(err)
				}
				_ = manifest.New(r, "bench")
			}
		})
	}
}

// BenchmarkValidate is Validate of a fresh manifest against its prompt:
// every included segment hashed again from its slice, and the whole.
func BenchmarkValidate(b *testing.B) {
	for _, n := range sizes {
		frags := fragments(n)
		r, _ := promptloom.Reduce(frags, active)
		m := manifest.New(r, "bench")
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(r.System)))
			b.ReportAllocs()
			for b.Loop() {
				if err := manifest.Validate(m, r.System); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFloor is the work no reducer can avoid on the same bytes: BLAKE3
// of every segment, BLAKE3 of the whole prompt, one copy into the output.
func BenchmarkFloor(b *testing.B) {
	for _, n := range sizes {
		frags := fragments(n)
		total := promptBytes(frags)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				floor(frags, total)
			}
		})
	}
}

func floor(frags []promptloom.Fragment, total int) {
	out := make([]byte, 0, total)
	for i, f := range frags {
		_ = digest.String(f.Body)
		if i > 0 {
			out = append(out, "\n\n"...)
		}
		out = append(out, f.Body...)
	}
	_ = digest.Bytes(out)
}

// BenchmarkRatio runs reduce + manifest and the floor in turn on the same
// fragments, one of each per iteration (in alternating order), and reports
// the ratio of their times as x-floor. Load on a shared machine comes and
// goes; interleaved, it falls on both alike, where BenchmarkReduce and
// BenchmarkFloor run minutes apart.
func BenchmarkRatio(b *testing.B) {
	for _, n := range sizes {
		frags := fragments(n)
		total := promptBytes(frags)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var reduce, base time.Duration
			i := 0
			for b.Loop() {
				for k := range 2 {
					start := time.Now()
					if (i+k)%2 == 0 {
						floor(frags, total)
						base += time.Since(start)
						continue
					}
					r, err := promptloom.Reduce(frags, active)
					if err != nil {
						b.Fatal(err)
					}
					_ = manifest.New(r, "bench")
					reduce += time.Since(start)
				}
				i++
			}
			b.ReportMetric(float64(reduce)/float64(base), "x-floor")
		})
	}
}

func promptBytes(frags []promptloom.Fragment) int {
	n := 0
	for _, f := range frags {
		n += len(f.Body) + 2
	}
	return n - 2
}

// BenchmarkRead reads a written manifest back (verify reads every retained
// one), beside its floor: the JSON reader's one check of the same bytes.
func BenchmarkRead(b *testing.B) {
	frags := fragments(250)
	r, _ := promptloom.Reduce(frags, active)
	data, err := manifest.New(r, "bench").Canonical()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("floor", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := manifest.Read(data[:len(data)-1]); err == nil {
				b.Fatal("a cut manifest read")
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := manifest.Read(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
