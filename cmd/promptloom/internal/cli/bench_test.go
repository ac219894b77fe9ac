package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/benchdata"
)

// BenchmarkCLIExplain runs `promptloom explain --format json` end to end on
// a 10,000-fragment options file (about 4 MB): read, parse, stages,
// reduce, manifest, validate, encode.
func BenchmarkCLIExplain(b *testing.B) {
	words := strings.Fields("the agent reads the repository before it edits a file and keeps the todo list current, step by step: tests first")
	r := rand.New(rand.NewPCG(1, 2))
	items := make([]any, 10000)
	for i := range items {
		var s strings.Builder
		for s.Len() < 400 {
			s.WriteString(words[r.IntN(len(words))])
			s.WriteByte(' ')
		}
		items[i] = map[string]any{"content": s.String(), "title": fmt.Sprintf("Part %d", i)}
	}
	data, err := json.Marshal(map[string]any{"system": items, "tools": []any{map[string]any{"name": "todo", "guidance": "Track it."}}})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "opts.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if code := Main([]string{"explain", "--format", "json", path}, nil, io.Discard, io.Discard); code != ExitOK {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkCLIExplainBudget is the CLI side of bench/peer, in process:
// `promptloom explain --budget N --counter bytes --format json` on the
// prioritized workload (internal/benchdata) held to half its bytes.
func BenchmarkCLIExplainBudget(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		cs := benchdata.Chunks(n)
		data := benchdata.Options(cs)
		path := filepath.Join(b.TempDir(), "opts.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		args := []string{"explain", "--budget", fmt.Sprint(benchdata.Bytes(cs) / 2), "--counter", "bytes", "--format", "json", path}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if code := Main(args, nil, io.Discard, io.Discard); code != ExitOK {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
