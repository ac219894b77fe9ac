package explain

import (
	_ "embed"
	"html/template"
	"io"
	"strconv"
)

// The page is one self-contained file: styles and the small script that
// links spans to table rows are inlined, nothing is fetched.

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"lineClass":  func(op byte) string { return map[byte]string{'-': "del", '+': "ins"}[op] },
	"spanClass":  func(op byte) string { return map[byte]string{'-': "del-chars", '+': "ins-chars"}[op] },
	"op":         func(op byte) string { return string(op) },
	"hunkHeader": hunkHeader,
	"short":      shortDigest,
	"change":     func(d FragmentDelta) string { return changeCell(&d) },
	"offset": func(r Row) string {
		if r.Offset == nil {
			return "-"
		}
		return strconv.Itoa(*r.Offset)
	},
}).Parse(pageTemplate))

// piece is a run of prompt text: a fragment's bytes, a separator, or the
// cache boundary marker.
type piece struct {
	Text     string
	ID       string // the fragment's id; "" for a separator
	Title    string // shown on hover
	Color    int    // palette index
	Change   string // on a diff page, the fragment's change
	Boundary bool   // the cache-prefix boundary marker
	// Origin, in a templated fragment, says where the bytes came from
	// (template text, a binding), shown on hover; Kind is the span's kind;
	// Cont marks a piece that continues its fragment (no label).
	Origin, Kind string
	Cont         bool
}

// pane is one prompt with its table.
type pane struct {
	Name     string
	Digest   string
	Bytes    int
	Absent   bool
	Pieces   []piece
	Rows     []Row
	Included int
	Excluded int
}

type pageData struct {
	Title   string
	Panes   []pane
	Delta   *Delta
	Hunks   []hunk // the delta's
	Summary string
	Prefix  int
	// Origins: some piece has an origin, so the page shows it on hover.
	Origins bool
}

// WriteHTML writes the explanation as a self-contained HTML page: the prompt
// with each fragment's span shaded and labelled, its reason on hover and in
// the table beside it, excluded fragments listed with their reasons.
func (e *Explanation) WriteHTML(w io.Writer, name string) error {
	p := paneOf(e, name, -1, nil)
	return page.Execute(w, pageData{Title: "promptloom explain: " + name, Panes: []pane{p}, Prefix: -1, Origins: hasOrigins(p)})
}

// WriteHTML writes the delta as a self-contained HTML page: the two prompts
// side by side, changed fragments marked, the cache-prefix boundary drawn in
// both, the fragment table and the unified diff.
func (d *Delta) WriteHTML(w io.Writer, aName, bName string) error {
	changes := map[*Row]string{}
	for _, f := range d.Fragments {
		if f.A != nil {
			changes[f.A] = f.Kind
		}
		if f.B != nil {
			changes[f.B] = f.Kind
		}
	}
	pa, pb := paneOf(d.A, "A "+aName, d.CommonPrefixBytes, changes), paneOf(d.B, "B "+bName, d.CommonPrefixBytes, changes)
	return page.Execute(w, pageData{
		Title:   "promptloom diff: " + aName + " → " + bName,
		Panes:   []pane{pa, pb},
		Origins: hasOrigins(pa) || hasOrigins(pb),
		Delta:   d,
		Hunks:   d.hunks,
		Summary: d.summary(),
		Prefix:  d.CommonPrefixBytes,
	})
}

// paneOf cuts a prompt into pieces along its included rows, with a boundary
// marker at prefix (none when prefix < 0).
func paneOf(e *Explanation, name string, prefix int, changes map[*Row]string) pane {
	p := pane{Name: name, Digest: e.header().WholePromptDigest.String(), Bytes: e.header().SystemPromptBytes, Absent: e.absent(),
		Rows: e.Fragments}
	p.Included, p.Excluded = e.counts()
	text := e.System
	var pieces []piece
	add := func(pc piece, start, end int) {
		if prefix > start && prefix < end { // the boundary falls inside
			pieces = append(pieces, withText(pc, text[start:prefix]), piece{Boundary: true}, withText(pc, text[prefix:end]))
			return
		}
		if prefix == start && prefix >= 0 {
			pieces = append(pieces, piece{Boundary: true})
		}
		pieces = append(pieces, withText(pc, text[start:end]))
	}
	off := 0
	for i := range e.Fragments {
		r := &e.Fragments[i]
		if !r.Included {
			continue
		}
		if *r.Offset > off {
			add(piece{}, off, *r.Offset)
		}
		pc := piece{ID: r.ID, Title: r.ID + ": " + r.Reason, Color: i % 12, Change: changes[r]}
		if len(r.Spans) == 0 {
			add(pc, *r.Offset, *r.Offset+r.Bytes)
		} else {
			for _, sp := range originPieces(r, pc) {
				add(sp.piece, sp.start, sp.end)
			}
		}
		off = *r.Offset + r.Bytes
	}
	if prefix >= 0 && prefix == len(text) {
		pieces = append(pieces, piece{Boundary: true})
	}
	p.Pieces = pieces
	return p
}

func withText(p piece, s string) piece {
	p.Text = s
	return p
}
