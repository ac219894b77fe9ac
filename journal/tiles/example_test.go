package tiles_test

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/promptloom/promptloom/journal/tiles"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// A log of three records, served; an auditor fetches the checkpoint and
// the one hash tile it needs to prove the second record.
func Example() {
	recs := [][]byte{[]byte("a\n"), []byte("b\n"), []byte("c\n")}
	var stored []tlog.Hash
	read := tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(ix))
		for i, x := range ix {
			out[i] = stored[x]
		}
		return out, nil
	})
	for i, r := range recs {
		hs, _ := tlog.StoredHashes(int64(i), r, read)
		stored = append(stored, hs...)
	}
	root, _ := tlog.TreeHash(3, read)
	skey, _, _ := note.GenerateKey(rand.Reader, "example.com/log")
	signer, _ := note.NewSigner(skey)
	cp, _ := note.Sign(&note.Note{Text: fmt.Sprintf("example.com/log\n3\n%s\n", root)}, signer)

	srv := httptest.NewServer(tiles.Handler(logs{"run": {Checkpoint: cp, Size: 3, Records: recs}}))
	defer srv.Close()
	resp, _ := http.Get(srv.URL + "/run/tile/0/000.p/3")
	tile, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, len(tile), "bytes: the three leaves' hashes")
	// Output: 200 OK 96 bytes: the three leaves' hashes
}
