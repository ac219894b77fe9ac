// Package tiles serves trees of records as C2SP tlog-tiles
// (c2sp.org/tlog-tiles): the latest signed checkpoint and, read-only, the
// hash tiles and entry bundles an auditor's client fetches to check a
// record's inclusion or the consistency of two checkpoints, without the
// rest of the log. A promptloom transcript has one tree per session; the
// journal gives each as a Log, and the proxy and promptloom serve put this
// handler in front of them.
//
// A tile's bytes never change: a client that trusts a checkpoint fetches
// the tiles tlog.TileHashReader asks for, partial ones at the widths of
// that checkpoint's tree, and verifies every hash it reads against its
// root.
package tiles

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/mod/sumdb/tlog"
)

// height is the tiles' height: C2SP fixes it at 8 (256 hashes a tile).
const height = 8

// A Log is one tree of records as its latest checkpoint signs it.
type Log struct {
	// Checkpoint is the signed checkpoint note, served as it is.
	Checkpoint []byte
	// Size is the tree size the checkpoint signs: nothing beyond it is
	// served.
	Size int64
	// Records are the tree's records in order, at least Size of them (a
	// live log may have more since its checkpoint).
	Records [][]byte
}

// Source finds a log by its name, the one path segment before
// /checkpoint or /tile/ (decoded from its percent-encoding).
type Source interface {
	Log(name string) (Log, bool)
}

// Handler serves every log of src under NAME/: NAME/checkpoint,
// NAME/tile/L/N[.p/W] and NAME/tile/entries/N[.p/W]. Mount it with
// http.StripPrefix. It answers GET and HEAD only.
func Handler(src Source) http.Handler {
	return &handler{src: src, trees: map[string]*stored{}}
}

type handler struct {
	src   Source
	mu    sync.Mutex
	trees map[string]*stored
}

// stored is the stored hashes of a log's records, as far as they were
// last needed, and the leaf of each record, to notice a log that no longer
// extends them.
type stored struct {
	mu     sync.Mutex
	leaves []tlog.Hash
	hashes []tlog.Hash
}

func (s *stored) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(s.hashes)) {
			return nil, fmt.Errorf("tiles: stored hash %d of %d", x, len(s.hashes))
		}
		out[i] = s.hashes[x]
	}
	return out, nil
}

// extend makes s hold the stored hashes of the first n records, computing
// only those of records it has not seen, or all again when the records
// are not the ones it saw.
func (s *stored) extend(records [][]byte, n int64) error {
	if k := int64(len(s.leaves)); k > 0 && (k > int64(len(records)) || tlog.RecordHash(records[k-1]) != s.leaves[k-1]) {
		s.leaves, s.hashes = nil, nil
	}
	for i := int64(len(s.leaves)); i < n; i++ {
		leaf := tlog.RecordHash(records[i])
		hs, err := tlog.StoredHashesForRecordHash(i, leaf, s)
		if err != nil {
			return err
		}
		s.leaves, s.hashes = append(s.leaves, leaf), append(s.hashes, hs...)
	}
	return nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "tiles are read-only: GET or HEAD", http.StatusMethodNotAllowed)
		return
	}
	esc, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	name, err := url.PathUnescape(esc)
	if err != nil || name == "" {
		http.Error(w, "not a log name", http.StatusNotFound)
		return
	}
	log, ok := h.src.Log(name)
	if !ok {
		http.Error(w, "no such log", http.StatusNotFound)
		return
	}
	if log.Size < 0 || log.Size > int64(len(log.Records)) {
		http.Error(w, "the log has fewer records than its checkpoint signs", http.StatusInternalServerError)
		return
	}
	if rest == "checkpoint" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(log.Checkpoint)
		return
	}
	t, err := parsePath(rest)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if !served(t, log.Size) {
		http.Error(w, "no such tile in the tree the checkpoint signs", http.StatusNotFound)
		return
	}
	var data []byte
	if t.L < 0 {
		data = bundle(log.Records[t.N<<height : t.N<<height+int64(t.W)])
	} else if data, err = h.tile(name, log, t); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// A tile's bytes at a width never change, partial ones included.
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Write(data)
}

// tile is the hash tile t of log named name.
func (h *handler) tile(name string, log Log, t tlog.Tile) ([]byte, error) {
	h.mu.Lock()
	s, ok := h.trees[name]
	if !ok {
		s = &stored{}
		h.trees[name] = s
	}
	h.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.extend(log.Records, log.Size); err != nil {
		return nil, err
	}
	return tlog.ReadTileData(t, s)
}

// parsePath reads a C2SP tile path (after NAME/): tile/L/N[.p/W] or
// tile/entries/N[.p/W], spelled exactly as the spec (and x/mod's
// Tile.Path, with the height left out) writes it.
func parsePath(p string) (tlog.Tile, error) {
	rest, ok := strings.CutPrefix(p, "tile/")
	level, _, _ := strings.Cut(rest, "/")
	if !ok || len(p) > 128 || level == "" || level == "data" {
		return tlog.Tile{}, fmt.Errorf("not a checkpoint or tile path: %q", p)
	}
	xmod := "tile/8/" + rest
	if level == "entries" {
		xmod = "tile/8/data/" + strings.TrimPrefix(rest, "entries/")
	}
	t, err := tlog.ParseTilePath(xmod)
	if err != nil || t.H != height || t.Path() != xmod || t.L > 63 {
		return tlog.Tile{}, fmt.Errorf("not a tile path as C2SP spells it: %q", p)
	}
	return t, nil
}

// served reports whether tile t is one of the tree of size n: a full tile,
// or a partial one no wider than the tree has it while its full tile does
// not exist yet. The narrower widths are those of the smaller trees a live
// log signed before, which C2SP requires to stay served, so that a client
// holding an older checkpoint finds its tiles.
func served(t tlog.Tile, n int64) bool {
	level := max(t.L, 0) * height
	if level >= 63 {
		return false
	}
	nodes := n >> level // the complete nodes at the tile's bottom level
	if t.N > (nodes>>height)+1 {
		return false
	}
	have := nodes - t.N<<height
	if t.W == 1<<height {
		return have >= 1<<height
	}
	return int64(t.W) <= have && have < 1<<height
}

// bundle is an entry bundle: each record as a big-endian uint16 length
// and its bytes.
func bundle(records [][]byte) []byte {
	var b bytes.Buffer
	for _, r := range records {
		b.Write(binary.BigEndian.AppendUint16(nil, uint16(len(r))))
		b.Write(r)
	}
	return b.Bytes()
}
