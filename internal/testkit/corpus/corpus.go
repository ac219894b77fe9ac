// Package corpus gives tests the documents of their package's fuzz corpora
// and random mutations of documents, so a property checked by a fuzzer is
// also checked by go test on what the fuzzer found and on its neighbours.
package corpus

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Docs returns the inputs of the fuzz corpora under testdata/fuzz of the
// test's package: each file's one []byte or string value.
func Docs(t testing.TB) []string {
	t.Helper()
	var docs []string
	paths, _ := filepath.Glob("testdata/fuzz/*/*")
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// A corpus file: a header line, then []byte("...") or string("...").
		for _, open := range []string{"[]byte(", "string("} {
			if i := strings.Index(string(b), open); i >= 0 {
				if s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(string(b[i+len(open):])), ")")); err == nil {
					docs = append(docs, s)
				}
			}
		}
	}
	return docs
}

// Mutate changes doc in one to three places: a byte replaced, dropped or
// inserted, each drawn from alphabet. doc itself may be changed.
func Mutate(r *rand.Rand, doc []byte, alphabet []byte) []byte {
	for range 1 + r.IntN(3) {
		if len(doc) == 0 {
			break
		}
		i := r.IntN(len(doc))
		switch r.IntN(3) {
		case 0:
			doc[i] = alphabet[r.IntN(len(alphabet))]
		case 1:
			doc = append(doc[:i:i], doc[i+1:]...)
		default:
			doc = append(doc[:i:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, doc[i:]...)...)
		}
	}
	return doc
}

// Mutations returns n mutations of documents drawn from seeds.
func Mutations(r *rand.Rand, seeds []string, alphabet []byte, n int) []string {
	out := make([]string, 0, n)
	for range n {
		out = append(out, string(Mutate(r, []byte(seeds[r.IntN(len(seeds))]), alphabet)))
	}
	return out
}
