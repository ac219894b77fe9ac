package corpus_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/promptloom/promptloom/internal/testkit/corpus"
)

// Each mutation changes one to three bytes of a seed: a fuzzer's
// neighbourhood, reproducibly.
func ExampleMutations() {
	r := rand.New(rand.NewPCG(1, 2))
	for _, doc := range corpus.Mutations(r, []string{`{"a":[1,2]}`}, []byte(`{}[]":,`), 3) {
		fmt.Printf("%q\n", doc)
	}
	// Output:
	// "\"a\":[1,}2]}"
	// "{\"\":[1,2]}"
	// "{a\":[1,]2]}"
}
