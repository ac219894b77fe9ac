package transcript

import (
	"fmt"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// The tree a journal keeps (its perfect subtrees' roots only) has the root
// tlog computes from every stored hash, at every size.
func TestTreeRootIsTlogs(t *testing.T) {
	var tr tree
	var stored []tlog.Hash
	read := tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(ix))
		for i, x := range ix {
			out[i] = stored[x]
		}
		return out, nil
	})
	for n := int64(0); n <= 200; n++ {
		want, err := tlog.TreeHash(n, read)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.root(); got != want {
			t.Fatalf("size %d: root %s, tlog's %s", n, got, want)
		}
		leaf := tlog.RecordHash([]byte(fmt.Sprint(n)))
		more, err := tlog.StoredHashesForRecordHash(n, leaf, read)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, more...)
		tr.add(leaf)
	}
}
