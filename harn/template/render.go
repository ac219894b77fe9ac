package template

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/promptloom/promptloom"
	canon "github.com/promptloom/promptloom/internal/json"
)

// entry is a value in scope and what it stands for.
type entry struct {
	v any
	// origin is the binding path the value is ("" for none: a literal, the
	// loop dict, a dict key).
	origin string
	// filters are those that made the value from its origin (an include's
	// `with { who: name | upper }`), for the spans that show it.
	filters []string
	// bound: the value is one of the caller's bindings, so reading it (or
	// under it) is recorded in Result.Reads. A loop variable is not: the
	// loop's iterable was recorded when it was read.
	bound bool
}

type named struct {
	name string
	e    entry
}

// scope is Harn's Scope: the caller's bindings, then (in an included file)
// the includer's scope flattened with its with { } pairs, then a stack of
// loop layers. Later entries shadow earlier ones.
type scope struct {
	base   *dict
	flat   map[string]entry
	layers [][]named
}

func (s *scope) lookup(name string) (entry, bool) {
	for i := len(s.layers) - 1; i >= 0; i-- {
		l := s.layers[i]
		for j := len(l) - 1; j >= 0; j-- {
			if l[j].name == name {
				return l[j].e, true
			}
		}
	}
	if e, ok := s.flat[name]; ok {
		return e, true
	}
	if s.base != nil {
		if v, ok := s.base.get(name); ok {
			return entry{v: v, origin: name, bound: true}, true
		}
	}
	return entry{}, false
}

// flatten is the scope an included file starts with.
func (s *scope) flatten() *scope {
	flat := make(map[string]entry, len(s.flat))
	for k, e := range s.flat {
		flat[k] = e
	}
	for _, l := range s.layers {
		for _, n := range l {
			flat[n.name] = n.e
		}
	}
	return &scope{base: s.base, flat: flat}
}

// file is the template being rendered: the top one or an included one.
type file struct {
	name string // as messages and spans name it
	dir  string // its directory in Options.Root ("." for the top)
}

type renderer struct {
	t        *Template
	o        Options
	buf      []byte
	spans    []span
	outer    int // bytes written by enclosing sections, for the limit
	steps    int
	maxSteps int
	reads    map[string]struct{}
	stack    []string
	via      [2]int // the top template's include being rendered: its line and column
	made     int    // spans made, for the limit (spanBytes)
	cache    map[string][]node
	file     *file
}

func (t *Template) render(b *dict) (*Result, error) {
	r := &renderer{t: t, o: t.o, maxSteps: t.o.MaxBytes + 1<<16, reads: map[string]struct{}{},
		file: &file{name: t.name, dir: "."}}
	// Size the output and the spans as the last render's were: a template
	// is usually rendered with bindings of much the same size.
	r.buf = make([]byte, 0, max(len(t.src), int(t.lastBytes.Load())))
	r.spans = make([]span, 0, t.lastSpans.Load())
	if err := r.nodes(t.nodes, &scope{base: b}); err != nil {
		if err.Path == "" {
			err.Path = t.name
		}
		return nil, err
	}
	t.lastBytes.Store(int64(len(r.buf)))
	t.lastSpans.Store(int64(len(r.spans)))
	// The buffer is never written again: the text can share it.
	text := unsafe.String(unsafe.SliceData(r.buf), len(r.buf))
	return &Result{Text: text, Spans: r.spans, Reads: collapse(r.reads), Steps: r.steps}, nil
}

// collapse sorts the paths read and drops those under another one.
func collapse(reads map[string]struct{}) []string {
	all := make([]string, 0, len(reads))
	for p := range reads {
		all = append(all, p)
	}
	slices.Sort(all)
	out := all[:0]
	for _, p := range all {
		if n := len(out); n > 0 && under(p, out[n-1]) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// under reports whether path p is inside path parent (parent.x, parent[0]).
func under(p, parent string) bool {
	return len(p) > len(parent) && strings.HasPrefix(p, parent) && (p[len(parent)] == '.' || p[len(parent)] == '[')
}

func (r *renderer) errAt(line, col int, kind error, msg string) *Error {
	return &Error{Line: line, Col: col, msg: msg, kind: kind}
}

func (r *renderer) step(line, col int) *Error { return r.charge(1, line, col) }

// charge counts n steps of work: one per node and loop iteration, and for
// filters and comparisons one per item or per 16 bytes they go through.
func (r *renderer) charge(n, line, col int) *Error {
	r.steps += n
	if r.steps > r.maxSteps {
		return r.errAt(line, col, promptloom.ErrTooLarge, fmt.Sprintf("rendering takes more than %d steps, the output limit's worth", r.maxSteps))
	}
	return nil
}

// cost is the work a value stands for: its items, or its bytes over 16.
func cost(v any) int {
	switch t := v.(type) {
	case string:
		return 1 + len(t)/16
	case []any:
		return 1 + len(t)
	case *dict:
		return 1 + len(t.keys)
	}
	return 1
}

// emit appends s with its span.
func (r *renderer) emit(s string, sp span, line, col int) *Error {
	if s == "" {
		return nil
	}
	if r.outer+len(r.buf)+len(s)+r.spanBytes() > r.o.MaxBytes {
		return r.errAt(line, col, promptloom.ErrTooLarge, fmt.Sprintf("rendered output passes the limit of %d bytes", r.o.MaxBytes))
	}
	sp.Start = len(r.buf)
	r.buf = append(r.buf, s...)
	sp.End = len(r.buf)
	sp.File = r.file.name
	sp.IncludeLine, sp.IncludeCol = r.via[0], r.via[1]
	if n := len(r.spans); n > 0 && mergeable(&r.spans[n-1], &sp) {
		r.spans[n-1].End = sp.End
		return nil
	}
	r.spans = append(r.spans, sp)
	r.made++
	return nil
}

// spanCost is what a span counts for against the output limit, past the
// first freeSpans: its size in memory, so a render of one-byte pieces
// holds no more in spans than the limit allows in text.
const (
	spanCost  = int(unsafe.Sizeof(span{}))
	freeSpans = 512
)

// spanBytes is what the spans made so far count for against the limit.
func (r *renderer) spanBytes() int { return max(0, r.made-freeSpans) * spanCost }

// mergeable: a span that continues the one before it, from the same
// directive (a section's scaffolding written in pieces).
func mergeable(a, b *span) bool {
	return a.End == b.Start && a.Kind == "section" && b.Kind == "section" && a.File == b.File && a.Line == b.Line && a.Col == b.Col
}

func (r *renderer) nodes(ns []node, sc *scope) *Error {
	for _, n := range ns {
		if err := r.node(n, sc); err != nil {
			return err
		}
	}
	return nil
}

func (r *renderer) node(n node, sc *scope) *Error {
	switch n := n.(type) {
	case *textNode:
		if err := r.step(n.line, n.col); err != nil {
			return err
		}
		return r.emit(n.s, span{Kind: "text", Line: n.line, Col: n.col}, n.line, n.col)
	case *exprNode:
		if err := r.step(n.line, n.col); err != nil {
			return err
		}
		v, origin, err := r.eval(n.x, sc, n.line, n.col)
		if err != nil {
			return err
		}
		sp := span{Kind: "value", Line: n.line, Col: n.col}
		if origin != "" {
			sp.Kind, sp.Path, sp.Filters = "binding", origin, filtersOf(n.x, sc)
		}
		return r.emit(display(v), sp, n.line, n.col)
	case *bareNode:
		if err := r.step(n.line, n.col); err != nil {
			return err
		}
		e, ok := sc.lookup(n.ident)
		if !ok || e.bound {
			r.reads[n.ident] = struct{}{}
		}
		if !ok {
			return r.emit("{{"+n.ident+"}}", span{Kind: "text", Line: n.line, Col: n.col}, n.line, n.col)
		}
		sp := span{Kind: "value", Line: n.line, Col: n.col}
		if e.origin != "" {
			sp.Kind, sp.Path, sp.Filters = "binding", e.origin, e.filters
		}
		return r.emit(display(e.v), sp, n.line, n.col)
	case *ifNode:
		if err := r.step(n.line, n.col); err != nil {
			return err
		}
		for _, b := range n.branches {
			v, _, err := r.eval(b.cond, sc, b.line, b.col)
			if err != nil {
				return err
			}
			if truthy(v) {
				return r.nodes(b.body, sc)
			}
		}
		return r.nodes(n.els, sc)
	case *forNode:
		return r.loop(n, sc)
	case *includeNode:
		return r.include(n, sc)
	case *sectionNode:
		return r.section(n, sc)
	}
	return nil
}

func (r *renderer) loop(n *forNode, sc *scope) *Error {
	if err := r.step(n.line, n.col); err != nil {
		return err
	}
	v, origin, err := r.eval(n.iter, sc, n.line, n.col)
	if err != nil {
		return err
	}
	var count int
	switch t := v.(type) {
	case nil:
	case []any:
		count = len(t)
	case *dict:
		count = len(t.keys)
	default:
		return r.errAt(n.line, n.col, errRender, fmt.Sprintf("cannot iterate over %s — expected list, dict, set, or range", typeName(v)))
	}
	if count == 0 {
		return r.nodes(n.empty, sc)
	}
	layer := make([]named, 0, 3)
	// One loop dict serves every turn: nothing keeps a value past the turn
	// that read it (spans and reads keep only text).
	loop := loopDict(0, count)
	sc.layers = append(sc.layers, nil)
	defer func() { sc.layers = sc.layers[:len(sc.layers)-1] }()
	for i := range count {
		if err := r.step(n.line, n.col); err != nil {
			return err
		}
		var key, item entry
		switch t := v.(type) {
		case []any:
			key, item = entry{v: int64(i)}, entry{v: t[i]}
			if origin != "" {
				item.origin = origin + "[" + strconv.Itoa(i) + "]"
			}
		case *dict:
			key, item = entry{v: t.keys[i]}, entry{v: t.vals[i]}
			if origin != "" {
				item.origin = origin + keySeg(t.keys[i])
			}
		}
		layer = append(layer[:0], named{n.val, item})
		if n.key != "" {
			layer = append(layer, named{n.key, key})
		}
		loop.vals[0], loop.vals[1], loop.vals[2], loop.vals[3] = i == 0, int64(i+1), int64(i), i == count-1
		layer = append(layer, named{"loop", entry{v: loop}})
		sc.layers[len(sc.layers)-1] = layer
		if err := r.nodes(n.body, sc); err != nil {
			return err
		}
	}
	return nil
}

// keySeg is the path step to a dict's key: .name, or ["key"] for a key
// that is not an identifier.
func keySeg(k string) string {
	if isIdent(k) {
		return "." + k
	}
	return "[" + string(canon.AppendString(nil, k)) + "]"
}

func (r *renderer) include(n *includeNode, sc *scope) *Error {
	if err := r.step(n.line, n.col); err != nil {
		return err
	}
	pv, _, err := r.eval(n.path, sc, n.line, n.col)
	if err != nil {
		return err
	}
	p, ok := pv.(string)
	if !ok {
		return r.errAt(n.line, n.col, errRender, fmt.Sprintf("include path must be a string (got %s)", typeName(pv)))
	}
	child, id, err := r.resolve(p, n.line, n.col)
	if err != nil {
		return err
	}
	if slices.Contains(r.stack, id) {
		return r.errAt(n.line, n.col, errInclude, fmt.Sprintf("circular include detected: %s → %s", strings.Join(r.stack, " → "), id))
	}
	if len(r.stack) >= includeDepth {
		return r.errAt(n.line, n.col, errInclude, fmt.Sprintf("include depth exceeded (%d levels)", includeDepth))
	}
	cs := sc.flatten()
	for _, w := range n.with {
		v, origin, err := r.eval(w.x, sc, n.line, n.col)
		if err != nil {
			return err
		}
		cs.flat[w.name] = entry{v: v, origin: origin, filters: filtersOf(w.x, sc)}
	}
	nodes, err := r.parsed(child, id, n.line, n.col)
	if err != nil {
		return err
	}
	saved := r.file
	r.file = child
	if len(r.stack) == 0 { // an include of the top template: its bytes say so
		r.via = [2]int{n.line, n.col}
	}
	r.stack = append(r.stack, id)
	err = r.nodes(nodes, cs)
	r.stack = r.stack[:len(r.stack)-1]
	if len(r.stack) == 0 {
		r.via = [2]int{}
	}
	r.file = saved
	return err
}

// displayDir is the directory Harn shows for files a template includes:
// the parent of its name as given.
func displayDir(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		if i == 0 {
			return "/"
		}
		return name[:i]
	}
	return ""
}

// resolve finds the file an include names, as Harn's resolver does,
// within Options.Root.
func (r *renderer) resolve(p string, line, col int) (*file, string, *Error) {
	fail := func(msg string) (*file, string, *Error) { return nil, "", r.errAt(line, col, errInclude, msg) }
	if strings.HasPrefix(p, "std/") {
		return fail(fmt.Sprintf("unknown stdlib prompt asset '%s'", p))
	}
	if r.o.Root == nil {
		return fail(fmt.Sprintf("failed to read included template %s: no template root to read it from", p))
	}
	var fsPath, name string
	if rel, ok := strings.CutPrefix(p, "@"); ok && strings.Contains(rel, "/") {
		alias, rest, _ := strings.Cut(rel, "/")
		if alias != "" {
			return fail(fmt.Sprintf("asset alias '%s' is not defined in [asset_roots] of harn.toml", alias))
		}
		clean := path.Clean(rest)
		if rest == "" || strings.Contains(rest, "\\") || strings.HasPrefix(rest, "/") || clean == ".." || strings.HasPrefix(clean, "../") || slices.Contains(strings.Split(rest, "/"), "..") || clean == "." {
			return fail(fmt.Sprintf("invalid project-root asset path '@/%s'", rest))
		}
		fsPath, name = clean, clean
	} else {
		fsPath = path.Join(r.file.dir, p)
		if dd := displayDir(r.file.name); dd != "" {
			name = strings.TrimSuffix(dd, "/") + "/" + p
		} else {
			name = p
		}
		inside := fsPath == r.file.dir || r.file.dir == "." && fsPath != ".." && !strings.HasPrefix(fsPath, "../") ||
			strings.HasPrefix(fsPath, r.file.dir+"/")
		if strings.HasPrefix(p, "/") {
			return fail(fmt.Sprintf("include path %s escapes template root %s", p, r.file.dir))
		}
		if !inside {
			return fail(fmt.Sprintf("include path %s escapes template root %s", fsPath, r.file.dir))
		}
	}
	return &file{name: name, dir: path.Dir(fsPath)}, "file:" + fsPath, nil
}

// parsed reads and parses an included file once per render.
func (r *renderer) parsed(f *file, id string, line, col int) ([]node, *Error) {
	if ns, ok := r.cache[id]; ok {
		return ns, nil
	}
	fsPath := strings.TrimPrefix(id, "file:")
	src, err := r.read(fsPath)
	if err != nil {
		kind := errInclude
		if errors.Is(err, promptloom.ErrTooLarge) {
			kind = promptloom.ErrTooLarge
		}
		return nil, r.errAt(line, col, kind, fmt.Sprintf("failed to read included template %s: %s", f.name, ioText(err)))
	}
	ns, perr := parseTemplate(src, r.o.MaxDepth)
	if perr != nil {
		perr.Path = f.name
		return nil, perr
	}
	if r.cache == nil {
		r.cache = map[string][]node{}
	}
	r.cache[id] = ns
	return ns, nil
}

var errNotUTF8 = errors.New("stream did not contain valid UTF-8")
var errIsDir = errors.New("is a directory")

func (r *renderer) read(p string) (string, error) {
	f, err := r.o.Root.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return "", errIsDir
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(r.o.MaxBytes)+1))
	if err != nil {
		return "", err
	}
	if len(b) > r.o.MaxBytes {
		return "", fmt.Errorf("%w: over the limit of %d bytes", promptloom.ErrTooLarge, r.o.MaxBytes)
	}
	if !utf8.Valid(b) {
		return "", errNotUTF8
	}
	return string(b), nil
}

// ioText is an I/O error as Rust's io::Error displays the common ones.
func ioText(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory (os error 2)"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied (os error 13)"
	case errors.Is(err, errIsDir):
		return "Is a directory (os error 21)"
	}
	return err.Error()
}

func (r *renderer) section(n *sectionNode, sc *scope) *Error {
	if err := r.step(n.line, n.col); err != nil {
		return err
	}
	args := make(map[string]any, len(n.args))
	for _, a := range n.args {
		v, _, err := r.eval(a.x, sc, n.line, n.col)
		if err != nil {
			return err
		}
		args[a.name] = v
	}
	saved, savedSpans := r.buf, r.spans
	r.outer += len(saved)
	r.buf, r.spans = nil, nil
	err := r.nodes(n.body, sc)
	body, bodySpans := string(r.buf), r.spans
	r.outer -= len(saved)
	r.buf, r.spans = saved, savedSpans
	if err != nil {
		return err
	}
	var llm any
	if e, ok := sc.lookup("llm"); ok {
		llm = e.v
		if e.bound {
			r.reads["llm"] = struct{}{}
		}
	}
	st, ok := renderSection(n.name, body, args, llm, r.o.MaxBytes)
	if !ok {
		return r.errAt(n.line, n.col, promptloom.ErrTooLarge, fmt.Sprintf("section `%s` makes text over the limit of %d bytes", n.name, r.o.MaxBytes))
	}
	scaffold := func(s string) *Error {
		return r.emit(s, span{Kind: "section", Line: n.line, Col: n.col}, n.line, n.col)
	}
	if st.bodyAt < 0 {
		return scaffold(st.text)
	}
	bodyLen := st.srcEnd - st.srcStart
	if err := scaffold(st.text[:st.bodyAt]); err != nil {
		return err
	}
	// The body's own spans, cut to the part the section kept.
	for _, sp := range bodySpans {
		s, e := max(sp.Start, st.srcStart), min(sp.End, st.srcEnd)
		if s >= e {
			continue
		}
		if r.outer+len(r.buf)+e-s+r.spanBytes() > r.o.MaxBytes {
			return r.errAt(n.line, n.col, promptloom.ErrTooLarge, fmt.Sprintf("rendered output passes the limit of %d bytes", r.o.MaxBytes))
		}
		sp.Start = len(r.buf)
		r.buf = append(r.buf, body[s:e]...)
		sp.End = len(r.buf)
		r.spans = append(r.spans, sp)
		r.made++
	}
	return scaffold(st.text[st.bodyAt+bodyLen:])
}

// filtersOf is the filters between a binding and x's value: the value's
// own (a name an include's with made of a filtered binding), then x's.
func filtersOf(x expr, sc *scope) []string {
	switch x := x.(type) {
	case *pathExpr:
		if len(x.segs) == 1 {
			if e, ok := sc.lookup(x.segs[0].s); ok {
				return e.filters
			}
		}
	case *pipeExpr:
		if inner := filtersOf(x.x, sc); len(inner) > 0 {
			return slices.Concat(inner, x.names)
		}
		return x.names
	}
	return nil
}

// eval evaluates an expression: its value and the binding path it is
// ("" when it is none).
func (r *renderer) eval(x expr, sc *scope, line, col int) (any, string, *Error) {
	switch x := x.(type) {
	case *litExpr:
		return x.v, "", nil
	case *pathExpr:
		v, origin := r.path(x.segs, sc)
		return v, origin, nil
	case *notExpr:
		v, _, err := r.eval(x.x, sc, line, col)
		if err != nil {
			return nil, "", err
		}
		return !truthy(v), "", nil
	case *cmpExpr:
		a, _, err := r.eval(x.a, sc, line, col)
		if err != nil {
			return nil, "", err
		}
		b, _, err := r.eval(x.b, sc, line, col)
		if err != nil {
			return nil, "", err
		}
		if err := r.charge(min(cost(a), cost(b)), line, col); err != nil {
			return nil, "", err
		}
		switch x.op {
		case "==":
			return equal(a, b), "", nil
		case "!=":
			return !equal(a, b), "", nil
		}
		c, ok := compare(a, b)
		if !ok {
			return false, "", nil
		}
		switch x.op {
		case "<":
			return c < 0, "", nil
		case "<=":
			return c <= 0, "", nil
		case ">":
			return c > 0, "", nil
		}
		return c >= 0, "", nil
	case *logicExpr:
		for i, sub := range x.xs {
			v, origin, err := r.eval(sub, sc, line, col)
			if err != nil {
				return nil, "", err
			}
			if i == len(x.xs)-1 || truthy(v) == x.or {
				return v, origin, nil
			}
		}
	case *pipeExpr:
		v, origin, err := r.eval(x.x, sc, line, col)
		if err != nil {
			return nil, "", err
		}
		for i := range x.filters {
			f := &x.filters[i]
			args := make([]any, len(f.args))
			origins := make([]string, len(f.args))
			for i, a := range f.args {
				if args[i], origins[i], err = r.eval(a, sc, line, col); err != nil {
					return nil, "", err
				}
			}
			fallback := f.name == "default" && len(args) == 1 && !truthy(v)
			if err := r.charge(cost(v), line, col); err != nil {
				return nil, "", err
			}
			if v, err = applyFilter(f, v, args, line, col, r.o.MaxBytes); err != nil {
				return nil, "", err
			}
			if err := r.charge(cost(v), line, col); err != nil {
				return nil, "", err
			}
			if fallback {
				origin = origins[0]
			}
		}
		return v, origin, nil
	}
	return nil, "", nil
}

// path resolves a path as Harn's resolve_path does: a miss anywhere is
// nil; a negative index counts from the end; an index into a string is a
// character.
func (r *renderer) path(segs []seg, sc *scope) (any, string) {
	e, ok := sc.lookup(segs[0].s)
	if !ok {
		r.reads[writtenPath(segs)] = struct{}{}
		return nil, ""
	}
	cur, origin := e.v, e.origin
	// The origin grows a step a segment: built once, not concatenated
	// (a path of n steps would cost n squared).
	var ob strings.Builder
	if origin != "" {
		ob.WriteString(origin)
	}
	for _, s := range segs[1:] {
		var step string
		switch t := cur.(type) {
		case *dict:
			if !s.index {
				cur, _ = t.get(s.s)
				step = keyStep(s)
			} else {
				cur, step = nil, indexStep(s.i)
			}
		case []any:
			if s.index {
				i := s.i
				if i < 0 {
					i += int64(len(t))
				}
				if i >= 0 && i < int64(len(t)) {
					cur, step = t[i], indexStep(i)
				} else {
					cur, step = nil, indexStep(s.i)
				}
			} else {
				cur, step = nil, keyStep(s)
			}
		case string:
			if s.index {
				cur, step = charAt(t, s.i), indexStep(s.i)
			} else {
				cur, step = nil, keyStep(s)
			}
		default:
			cur = nil
			if s.index {
				step = indexStep(s.i)
			} else {
				step = keyStep(s)
			}
		}
		if origin != "" {
			ob.WriteString(step)
		}
	}
	if origin != "" {
		origin = ob.String()
	}
	if e.bound {
		r.reads[origin] = struct{}{}
	}
	return cur, origin
}

func keyStep(s seg) string {
	if s.key {
		return keySeg(s.s)
	}
	return "." + s.s
}

func indexStep(i int64) string { return "[" + strconv.FormatInt(i, 10) + "]" }

// writtenPath is a path as the template spells it.
func writtenPath(segs []seg) string {
	var p strings.Builder
	p.WriteString(segs[0].s)
	for _, s := range segs[1:] {
		if s.index {
			p.WriteString(indexStep(s.i))
		} else {
			p.WriteString(keyStep(s))
		}
	}
	return p.String()
}

// charAt is the i-th character of s (negative from the end), or nil.
func charAt(s string, i int64) any {
	n := int64(utf8.RuneCountInString(s))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil
	}
	for _, c := range s {
		if i == 0 {
			return string(c)
		}
		i--
	}
	return nil
}
