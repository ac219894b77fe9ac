package options

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corpusDocs returns the documents of the package's fuzz corpora.
func corpusDocs(t *testing.T) []string {
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

// mutate changes doc in one to three places: a byte replaced, dropped or
// inserted, each drawn from alphabet.
func mutate(r *rand.Rand, doc []byte, alphabet []byte) []byte {
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
