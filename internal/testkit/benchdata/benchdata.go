// Package benchdata builds the prioritized-fragments workload that the
// budgeted explain benchmarks and bench/peer share: n system items of about
// 390 bytes of prompt prose each, every one in the considered register
// with a rank from 0 to 99 (its priority), so that a budget of half the
// bytes sheds about half of them, lowest rank first.
package benchdata

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Words is the vocabulary of the generated prose: plain prompt English
// with no secret in it, shared with the reducer's own benchmarks.
var Words = strings.Fields(`the agent reads the repository before it edits a file and keeps the todo
list current while it works through the plan step by step it runs the tests after each change and
reports what failed with the exact command it used so that a reviewer can repeat it later on when
something is unclear it asks one question rather than guessing and it never deletes files without
asking first because deleted work is hard to recover from in a shared repository with many users`)

// Chunk is one prioritized fragment: its text and its priority (rank).
type Chunk struct {
	Text string `json:"text"`
	Rank int    `json:"rank"`
}

// Chunks returns n chunks, the same for the same n.
func Chunks(n int) []Chunk {
	r := rand.New(rand.NewPCG(uint64(n), 11))
	out := make([]Chunk, n)
	for i := range out {
		out[i] = Chunk{Text: Prose(r, Words, 390) + ".", Rank: r.IntN(100)}
	}
	return out
}

// Prose returns words drawn from vocab with r, joined by spaces, until
// there are at least size bytes.
func Prose(r *rand.Rand, vocab []string, size int) string {
	var b strings.Builder
	for b.Len() < size {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[r.IntN(len(vocab))])
	}
	return b.String()
}

// Bytes is the size of the prompt the chunks make when all are included:
// their texts joined by "\n\n".
func Bytes(cs []Chunk) int {
	n := 0
	for _, c := range cs {
		n += len(c.Text) + 2
	}
	return max(n-2, 0)
}

// Options returns Harn-shaped options JSON holding the chunks as system
// items in the considered register, ranked by priority.
func Options(cs []Chunk) []byte {
	var b strings.Builder
	b.WriteString(`{"call_role":"bench","system":[`)
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(',')
		}
		text, _ := json.Marshal(c.Text)
		fmt.Fprintf(&b, `{"content":%s,"register":"considered","rank":%d}`, text, c.Rank)
	}
	b.WriteString("]}\n")
	return []byte(b.String())
}
