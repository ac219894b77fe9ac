package proxy_test

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"

	"github.com/zeebo/blake3"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// tileClient is an auditor's tlog.TileReader over the proxy's tiles: it
// knows C2SP's paths, x/mod's tile functions and nothing of promptloom.
type tileClient struct{ base string }

func (c tileClient) Height() int { return 8 }

func (c tileClient) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, t := range ts {
		p := strings.Replace(strings.Replace(t.Path(), "tile/8/", "tile/", 1), "tile/data/", "tile/entries/", 1)
		resp, err := http.Get(c.base + p)
		if err != nil {
			return nil, err
		}
		out[i], _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("%s: %s", p, resp.Status)
		}
	}
	return out, nil
}

func (tileClient) SaveTiles([]tlog.Tile, [][]byte) {}

// records reads a transcript's calls as its tree's records, from the
// lines alone: the request's chain hash (the outcome names it) and the
// outcome line's own BLAKE3, each ended by a newline.
func records(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct {
			Kind        string `json:"kind"`
			RequestHash string `json:"request_hash"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Kind == "provider_call_response" || l.Kind == "provider_call_error" {
			sum := blake3.Sum256(sc.Bytes())
			out = append(out, []byte(fmt.Sprintf("%s\nblake3:%x\n", l.RequestHash, sum)))
		}
	}
	return out
}

// The proxy serves each signed session's tree as C2SP tiles while it runs:
// a client with x/mod's tile functions, trusting only the checkpoint it
// verified with the log's key, proves every call of the session from them,
// and that the tree at a later checkpoint extends the earlier one.
func TestTilesVerifyWithXMod(t *testing.T) {
	skey, vkey, _ := note.GenerateKey(rand.Reader, "proxy.example")
	signer, _ := note.NewSigner(skey)
	verifier, _ := note.NewVerifier(vkey)
	up := fakeprovider.New()
	defer up.Close()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	u, _ := url.Parse(up.URL)
	p, err := proxy.New(&proxy.Options{Upstream: u, Open: func(session string) (*journal.Journal, error) {
		return journal.Open(path, &journal.Options{Session: session, Signer: signer, CheckpointEvery: 3})
	}})
	if err != nil {
		t.Fatal(err)
	}
	g := &rig{up: up, p: p, path: path}
	g.srv = httptest.NewServer(p)
	defer g.srv.Close()
	base := g.srv.URL + "/promptloom/tiles/agent%201/"
	if resp, err := http.Get(base + "checkpoint"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("a checkpoint before any: %v %v", resp.Status, err)
	}
	a := fakecache.NewAgent()
	var earlier tlog.Tree
	for round, calls := range []int{7, 3} {
		for range calls {
			if code, out := g.post(t, "/v1/messages", a.Turn("Next."), "Promptloom-Session", "agent 1"); code != 200 {
				t.Fatalf("%d %s", code, out)
			}
			a.Answer("ok")
		}
		resp, err := http.Get(base + "checkpoint")
		if err != nil {
			t.Fatal(err)
		}
		cp, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		n, err := note.Open(cp, note.VerifierList(verifier))
		if err != nil {
			t.Fatalf("round %d: the checkpoint: %v\n%s", round, err, cp)
		}
		lines := strings.Split(n.Text, "\n")
		var size int64
		fmt.Sscan(lines[1], &size)
		root, err := tlog.ParseHash(lines[2])
		if err != nil || size != []int64{6, 9}[round] || !strings.HasPrefix(lines[0], "proxy.example/agent%201/") {
			t.Fatalf("round %d: checkpoint %q", round, n.Text)
		}
		tree := tlog.Tree{N: size, Hash: root}
		hr := tlog.TileHashReader(tree, tileClient{base})
		recs := records(t, path)
		for i := range size {
			proof, err := tlog.ProveRecord(size, i, hr)
			if err != nil {
				t.Fatalf("round %d: call %d: %v", round, i, err)
			}
			if err := tlog.CheckRecord(proof, size, root, i, tlog.RecordHash(recs[i])); err != nil {
				t.Fatalf("round %d: call %d is not in the tree: %v", round, i, err)
			}
		}
		if earlier.N > 0 {
			proof, err := tlog.ProveTree(size, earlier.N, hr)
			if err != nil || tlog.CheckTree(proof, size, root, earlier.N, earlier.Hash) != nil {
				t.Fatalf("the tree of %d does not extend the tree of %d: %v", size, earlier.N, err)
			}
		}
		earlier = tree
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
