package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Prose is plain instructions in random order; dense is a fixed paragraph
// with the scanner's anchors (':', '=', '_', '-', "token", "Bearer") in
// every line, the harder case (fixed, because random order would make real
// secrets: "token: tool_name=x" is one).
var benchProse = strings.Fields(`The agent reads the repository before it edits a file and keeps the todo
list current while it works through the plan, step by step. It runs the tests after each change and
reports what failed, with the exact command it used, so that a reviewer can repeat it. When something
is unclear it asks one question rather than guessing, and it never deletes files without asking first.`)

const benchDense = `Note: tool_name=read-file; max_tokens=many. The token count is shown;
key: value pairs (api-key) are fine. Bearer, of bad news. AWS and JSON docs: see the list.
The agent reads the repository before it edits a file and keeps the todo list current. `

func proseText(words []string, n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.String()
}

// BenchmarkRedactScan is the cost of redacting 1 MB of text that holds no
// secret: the scan for the catalog's literals.
func BenchmarkRedactScan(b *testing.B) {
	for _, tc := range []struct {
		name string
		text string
	}{{"prose", proseText(benchProse, 1<<20)}, {"dense", strings.Repeat(benchDense, (1<<20)/len(benchDense))}} {
		b.Run(tc.name, func(b *testing.B) {
			s := tc.text
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if String(s) != s {
					b.Fatal("text changed")
				}
			}
		})
	}
}
