package tiles_test

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/journal/tiles"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// logs is a Source of fixed logs.
type logs map[string]tiles.Log

func (l logs) Log(name string) (tiles.Log, bool) { x, ok := l[name]; return x, ok }

func records(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("record %d\n", i))
	}
	return out
}

// treeOf is the size and root of the first n records, computed with tlog
// alone.
func treeOf(t *testing.T, recs [][]byte, n int64) tlog.Tree {
	t.Helper()
	var stored []tlog.Hash
	read := tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(ix))
		for i, x := range ix {
			out[i] = stored[x]
		}
		return out, nil
	})
	for i := range n {
		hs, err := tlog.StoredHashes(i, recs[i], read)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, hs...)
	}
	root, err := tlog.TreeHash(n, read)
	if err != nil {
		t.Fatal(err)
	}
	return tlog.Tree{N: n, Hash: root}
}

func signedCheckpoint(t *testing.T, s note.Signer, tree tlog.Tree) []byte {
	t.Helper()
	msg, err := note.Sign(&note.Note{Text: fmt.Sprintf("example.com/log\n%d\n%s\n", tree.N, tree.Hash)}, s)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// client is a tlog.TileReader over HTTP, as an auditor's tool would write
// it: x/mod names a tile tile/8/L/N, C2SP tile/L/N, and data tiles are
// C2SP's entries.
type client struct {
	t       *testing.T
	base    string
	fetched int
}

func (c *client) Height() int { return 8 }

func (c *client) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, tile := range ts {
		p := strings.Replace(tile.Path(), "tile/8/", "tile/", 1)
		p = strings.Replace(p, "tile/data/", "tile/entries/", 1)
		resp, err := http.Get(c.base + p)
		if err != nil {
			return nil, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("%s: %s", p, resp.Status)
		}
		out[i] = b
		c.fetched++
	}
	return out, nil
}

func (c *client) SaveTiles([]tlog.Tile, [][]byte) {}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// A client with x/mod's tile functions, trusting only a checkpoint it
// verified, proves records in the tree and the tree's consistency with an
// earlier one from the tiles served, for trees across tile boundaries.
func TestTilesVerifyWithXMod(t *testing.T) {
	skey, vkey, _ := note.GenerateKey(rand.Reader, "example.com/log")
	s, _ := note.NewSigner(skey)
	v, _ := note.NewVerifier(vkey)
	all := records(65536 + 300)
	src := logs{}
	srv := httptest.NewServer(http.StripPrefix("/logs/", tiles.Handler(src)))
	defer srv.Close()
	var earlier tlog.Tree
	for _, n := range []int64{1, 2, 255, 256, 257, 1000, 65536 + 3} {
		// A client holding the previous checkpoint still finds its
		// partial tiles in the larger tree, until their full tiles exist
		// (a client then falls back to those, as C2SP says and x/mod's
		// reader does not).
		if earlier.N > 0 && partialsKept(earlier.N, n) {
			src["a b/c"] = tiles.Log{Checkpoint: signedCheckpoint(t, s, treeOf(t, all, n)), Size: n, Records: all[:n]}
			hr := tlog.TileHashReader(earlier, &client{t: t, base: srv.URL + "/logs/a%20b%2Fc/"})
			if p, err := tlog.ProveRecord(earlier.N, earlier.N-1, hr); err != nil || tlog.CheckRecord(p, earlier.N, earlier.Hash, earlier.N-1, tlog.RecordHash(all[earlier.N-1])) != nil {
				t.Fatalf("the tree of %d, once the log has %d: %v", earlier.N, n, err)
			}
		}
		// A live log: more records than the checkpoint signs.
		src["a b/c"] = tiles.Log{Checkpoint: signedCheckpoint(t, s, treeOf(t, all, n)), Size: n, Records: all[:n+5]}
		base := srv.URL + "/logs/a%20b%2Fc/"
		code, cp := get(t, base+"checkpoint")
		if code != 200 {
			t.Fatalf("checkpoint: %d", code)
		}
		nt, err := note.Open(cp, note.VerifierList(v))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(nt.Text, "\n")
		root, _ := tlog.ParseHash(lines[2])
		tree := tlog.Tree{N: n, Hash: root}
		c := &client{t: t, base: base}
		hr := tlog.TileHashReader(tree, c)
		for _, i := range []int64{0, n / 2, n - 1} {
			p, err := tlog.ProveRecord(n, i, hr)
			if err != nil {
				t.Fatalf("size %d: prove record %d: %v", n, i, err)
			}
			if err := tlog.CheckRecord(p, n, root, i, tlog.RecordHash(all[i])); err != nil {
				t.Fatalf("size %d: record %d: %v", n, i, err)
			}
		}
		if earlier.N > 0 {
			p, err := tlog.ProveTree(n, earlier.N, hr)
			if err != nil {
				t.Fatalf("prove tree %d->%d: %v", earlier.N, n, err)
			}
			if err := tlog.CheckTree(p, n, root, earlier.N, earlier.Hash); err != nil {
				t.Fatalf("tree %d->%d: %v", earlier.N, n, err)
			}
		}
		earlier = tree
		// The entry bundle holding the last record decodes to the records.
		tile := tlog.TileForIndex(8, tlog.StoredHashIndex(0, n-1))
		tile.L = -1
		data, err := c.ReadTiles([]tlog.Tile{tile})
		if err != nil {
			t.Fatal(err)
		}
		b := data[0]
		for i := tile.N * 256; i < tile.N*256+int64(tile.W); i++ {
			l := int(binary.BigEndian.Uint16(b))
			if string(b[2:2+l]) != string(all[i]) {
				t.Fatalf("entry %d is %q", i, b[2:2+l])
			}
			b = b[2+l:]
		}
		if len(b) != 0 {
			t.Fatalf("%d bytes after the entries", len(b))
		}
	}
}

// partialsKept reports whether every partial tile of a tree of size old is
// still partial in the tree of size n.
func partialsKept(old, n int64) bool {
	for ; old > 0; old, n = old>>8, n>>8 {
		if old%256 != 0 && n/256 > old/256 {
			return false
		}
	}
	return true
}

// What is not a tile of the signed tree is refused, never guessed.
func TestRefusals(t *testing.T) {
	skey, _, _ := note.GenerateKey(rand.Reader, "example.com/log")
	s, _ := note.NewSigner(skey)
	all := records(300)
	src := logs{"l": {Checkpoint: signedCheckpoint(t, s, treeOf(t, all, 300)), Size: 300, Records: all}}
	srv := httptest.NewServer(tiles.Handler(src))
	defer srv.Close()
	for path, want := range map[string]int{
		"/l/tile/0/000":                     200,
		"/l/tile/0/001.p/44":                200,
		"/l/tile/1/000.p/1":                 200,
		"/l/tile/entries/001.p/44":          200,
		"/l/tile/0/001":                     404, // partial, asked as full
		"/l/tile/0/001.p/45":                404, // beyond the signed size
		"/l/tile/0/001.p/43":                200, // an older, smaller tree's width
		"/l/tile/0/000.p/43":                404, // its full tile exists
		"/l/tile/0/002.p/1":                 404,
		"/l/tile/data/000":                  404, // x/mod's name for entries
		"/l/tile/8/000":                     404, // x/mod's spelling, with the height
		"/l/tile/0/1":                       404, // not three digits
		"/l/tile/0/x000/001":                404, // not canonical
		"/l/tile/0/000.p/256":               404,
		"/l/tile/64/000":                    404,
		"/l/tile/-1/000":                    404,
		"/l/tile/0/x999999999999999999/000": 404,
		"/l/checkpoints":                    404,
		"/nope/checkpoint":                  404,
		"/":                                 404,
		"/l/../l/checkpoint":                404,
	} {
		code, body := get(t, srv.URL+path)
		if code != want {
			t.Errorf("%s: %d %q, want %d", path, code, body, want)
		}
	}
	resp, err := http.Post(srv.URL+"/l/checkpoint", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// A log whose records change under the handler (a session cut back and
// started again) is served from its new records, not stale hashes.
func TestRecordsReplaced(t *testing.T) {
	skey, vkey, _ := note.GenerateKey(rand.Reader, "example.com/log")
	s, _ := note.NewSigner(skey)
	v, _ := note.NewVerifier(vkey)
	src := logs{}
	srv := httptest.NewServer(tiles.Handler(src))
	defer srv.Close()
	for _, prefix := range []string{"first ", "second "} {
		recs := records(20)
		for i := range recs {
			recs[i] = append([]byte(prefix), recs[i]...)
		}
		tree := treeOf(t, recs, 20)
		src["l"] = tiles.Log{Checkpoint: signedCheckpoint(t, s, tree), Size: 20, Records: recs}
		_, cp := get(t, srv.URL+"/l/checkpoint")
		if _, err := note.Open(cp, note.VerifierList(v)); err != nil {
			t.Fatal(err)
		}
		hr := tlog.TileHashReader(tree, &client{t: t, base: srv.URL + "/l/"})
		p, err := tlog.ProveRecord(20, 7, hr)
		if err != nil || tlog.CheckRecord(p, 20, tree.Hash, 7, tlog.RecordHash(recs[7])) != nil {
			t.Fatalf("%s: %v", prefix, err)
		}
	}
}

func FuzzPath(f *testing.F) {
	for _, s := range []string{"l/checkpoint", "l/tile/0/000", "l/tile/entries/x001/002.p/3", "l/tile/63/000", "%zz/x", "l/tile/0/000.p/0"} {
		f.Add(s)
	}
	all := records(1000)
	src := logs{"l": {Checkpoint: []byte("cp\n"), Size: 1000, Records: all}}
	h := tiles.Handler(src)
	f.Fuzz(func(t *testing.T, p string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.URL.Path, r.URL.RawPath = "/"+p, "/"+p
		h.ServeHTTP(httptest.NewRecorder(), r)
	})
}
