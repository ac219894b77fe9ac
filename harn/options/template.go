package options

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/harn/template"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/spans"

	"github.com/tidwall/gjson"
)

// Templated fragments, promptloom's extension: a system item, an item of
// _system_fragments or a profile fragment may give a template in Harn's
// language, inline or as a file beside the options, with its bindings,
// instead of its body. Every key of the extension is in templateKeys, and
// this file is all that reads them: options that use none of them are
// read exactly as before.

// templateKeys are the keys of a templated item, in any of the three
// lists.
var templateKeys = []string{"template", "template_file", "bindings"}

// templateItem holds an item's template keys as read.
type templateItem struct {
	inline, file, bindings gjson.Result
}

// take keeps val when key is a template key, reporting whether it was.
func (t *templateItem) take(k string, val gjson.Result) bool {
	switch k {
	case "template":
		t.inline = val
	case "template_file":
		t.file = val
	case "bindings":
		t.bindings = val
	default:
		return false
	}
	return true
}

// takeAll keeps the template keys of an object's members.
func (t *templateItem) takeAll(m object) {
	for i, k := range m.keys {
		t.take(k, m.vals[i])
	}
}

// given reports whether the item is templated: it names a template. A
// bindings key alone templates nothing (and is an error there).
func (t *templateItem) given() bool { return t.inline.Exists() || t.file.Exists() }

// render renders the item at the path item: its text and what the manifest and
// explain need of it. bodyKey is the key the template stands in for
// (content or body), which may not be given too.
func (r *reader) render(item string, t *templateItem, bodyGiven bool, bodyKey string) (string, *promptloom.Template, error) {
	switch {
	case !t.given():
		return "", nil, errorf(ErrInvalid, field(item, "bindings"), t.bindings.Index, "bindings without a template: give `template` or `template_file` too")
	case t.inline.Exists() && t.file.Exists():
		return "", nil, errorf(ErrInvalid, item, t.file.Index, "give `template` or `template_file`, not both")
	case bodyGiven:
		return "", nil, errorf(ErrInvalid, item, t.inline.Index+t.file.Index, "give `%s` or a template, not both", bodyKey)
	}
	at := field(item, "template")
	var name string
	var src []byte
	root := r.files
	if t.file.Exists() {
		at = field(item, "template_file")
		if t.file.Type != gjson.String {
			return "", nil, errorf(ErrInvalid, at, t.file.Index, "must be a string, got %s", kind(t.file))
		}
		name = path.Clean(t.file.Str)
		if !fs.ValidPath(name) || name == "." {
			return "", nil, errorf(ErrInvalid, at, t.file.Index, "%s is not a path inside the options file's directory", quote(name))
		}
		if r.files == nil {
			return "", nil, errorf(ErrInvalid, at, t.file.Index, "%s cannot be read: the options were given without a directory (ParseOptions.Files)", quote(name))
		}
		var err error
		if src, err = r.readFile(name); err != nil {
			return "", nil, r.fileError(at, t.file.Index, err)
		}
		if dir := path.Dir(name); dir != "." {
			if root, err = fs.Sub(r.files, dir); err != nil {
				return "", nil, errorf(ErrInvalid, at, t.file.Index, "%v", err)
			}
		}
	} else {
		if t.inline.Type != gjson.String {
			return "", nil, errorf(ErrInvalid, at, t.inline.Index, "must be a string, got %s", kind(t.inline))
		}
		src = []byte(t.inline.Str)
	}
	bindings, err := r.bindings(item, t.bindings)
	if err != nil {
		return "", nil, err
	}
	bindings = overlay(bindings, r.over)
	if r.workLeft <= 0 {
		return "", nil, errorf(promptloom.ErrTooLarge, at, t.inline.Index+t.file.Index, "the templates have rendered past the limit of %d bytes", r.maxBytes)
	}
	rec := &recorder{fs: root, dir: path.Dir(name)}
	opts := &template.Options{MaxBytes: r.workLeft}
	if root != nil {
		opts.Root = rec
	}
	tp, err := template.Parse(name, src, opts)
	var res *template.Result
	if err == nil {
		res, err = tp.Render(bindings)
	}
	if err != nil {
		return "", nil, templateError(at, t.inline.Index+t.file.Index, err)
	}
	// Output and work count against one limit for all of the options'
	// templates, so ten thousand items cannot each render the limit.
	r.workLeft -= len(res.Text) + res.Steps + len(res.Spans)*int(unsafe.Sizeof(promptloom.Span{}))
	out := &promptloom.Template{File: name, Digest: digest.Of(string(src)), Spans: res.Spans,
		Bindings: make(map[string]digest.Digest, len(res.Reads))}
	if len(rec.read) > 0 {
		out.Includes = rec.read
	}
	values := newResolver(bindings)
	for _, p := range res.Reads {
		out.Bindings[p] = values.digest(p)
	}
	return res.Text, out, nil
}

// templateError is a template's error as an options error at the item's
// key: the template's own message (Harn's, with its position) and, under
// it, the *template.Error itself.
func templateError(at string, offset int, err error) *Error {
	kind := ErrInvalid
	if errors.Is(err, promptloom.ErrTooLarge) {
		kind = promptloom.ErrTooLarge
	}
	e := errorf(kind, at, offset, "%v", err)
	e.cause = err
	return e
}

// readFile reads a file beside the options, at most the size limit.
func (r *reader) readFile(name string) ([]byte, error) {
	f, err := r.files.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, errors.New("is a directory")
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(r.maxBytes)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > r.maxBytes {
		return nil, fmt.Errorf("%w: over the limit of %d bytes", promptloom.ErrTooLarge, r.maxBytes)
	}
	return b, nil
}

func (r *reader) fileError(at string, offset int, err error) *Error {
	kind := ErrInvalid
	if errors.Is(err, promptloom.ErrTooLarge) {
		kind = promptloom.ErrTooLarge
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return errorf(kind, at, offset, "cannot read it: %v", err)
}

// bindings returns an item's bindings as JSON: the object given, or the
// JSON file a string names (beside the options, checked as the options
// are: one object, no key given twice); none when absent or null.
func (r *reader) bindings(item string, v gjson.Result) ([]byte, error) {
	at := field(item, "bindings")
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return nil, nil
	case v.IsObject():
		return []byte(v.Raw), nil
	case v.Type != gjson.String:
		return nil, errorf(ErrInvalid, at, v.Index, "must be an object (the bindings) or a string (a JSON file of them), got %s", kind(v))
	}
	if !fs.ValidPath(v.Str) || v.Str == "." {
		return nil, errorf(ErrInvalid, at, v.Index, "%s is not a path inside the options file's directory", quote(v.Str))
	}
	if r.files == nil {
		return nil, errorf(ErrInvalid, at, v.Index, "%s cannot be read: the options were given without a directory (ParseOptions.Files)", quote(v.Str))
	}
	b, err := r.readFile(v.Str)
	if err != nil {
		return nil, r.fileError(at, v.Index, err)
	}
	if err := pjson.Check(b, nil); err != nil {
		return nil, errorf(ErrInvalid, at, v.Index, "%s: %v", quote(v.Str), err)
	}
	if !gjson.ParseBytes(b).IsObject() {
		return nil, errorf(ErrInvalid, at, v.Index, "%s is not one JSON object", quote(v.Str))
	}
	return b, nil
}

// callBindings checks ParseOptions.Bindings: one JSON object, no key
// given twice, within the size limit.
func callBindings(b []byte, limit int) (gjson.Result, error) {
	if len(b) > limit {
		return gjson.Result{}, errorf(promptloom.ErrTooLarge, "", -1, "bindings are %d bytes, over the limit of %d", len(b), limit)
	}
	if err := pjson.Check(b, nil); err != nil {
		return gjson.Result{}, errorf(ErrMalformed, "", -1, "bindings: %v", err)
	}
	v := gjson.ParseBytes(b)
	if !v.IsObject() {
		return gjson.Result{}, errorf(ErrInvalid, "", -1, "bindings must be one JSON object, got %s", kind(v))
	}
	return v, nil
}

// overlay is the bindings b with the members of over (ParseOptions'
// Bindings, one checked object) in place of its own of the same name.
func overlay(b []byte, over gjson.Result) []byte {
	if !over.IsObject() {
		return b
	}
	out := []byte{'{'}
	add := func(k, v gjson.Result) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(pjson.AppendString(out, k.Str), ':')
		out = append(out, v.Raw...)
	}
	if base := gjson.ParseBytes(b); base.IsObject() {
		base.ForEach(func(k, v gjson.Result) bool {
			if !over.Get(gjson.Escape(k.Str)).Exists() {
				add(k, v)
			}
			return true
		})
	}
	over.ForEach(func(k, v gjson.Result) bool {
		add(k, v)
		return true
	})
	return append(out, '}')
}

// recorder is a template's file system that notes each file read, with
// the digest of what was read, by its path from the options' directory.
type recorder struct {
	fs   fs.FS
	dir  string
	read map[string]digest.Digest
}

func (c *recorder) Open(name string) (fs.File, error) {
	f, err := c.fs.Open(name)
	if err != nil {
		return nil, err
	}
	return &recorded{File: f, c: c, name: path.Join(c.dir, name)}, nil
}

type recorded struct {
	fs.File
	c    *recorder
	name string
	buf  bytes.Buffer
}

func (f *recorded) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.buf.Write(p[:n])
	return n, err
}

// Close notes the file: harn/template opens each file once a render.
func (f *recorded) Close() error {
	if f.c.read == nil {
		f.c.read = map[string]digest.Digest{}
	}
	f.c.read[f.name] = digest.Of(f.buf.String())
	return f.File.Close()
}

// resolver finds the values of binding paths in one bindings object. The
// lists and objects it steps through are indexed once each, so a template
// reading a million items of one list one by one costs a million steps,
// not a million walks of the list.
type resolver struct {
	root    gjson.Result
	lists   map[string][]gjson.Result
	objects map[string]map[string]gjson.Result
}

func newResolver(bindings []byte) *resolver {
	return &resolver{root: gjson.ParseBytes(bindings), lists: map[string][]gjson.Result{}, objects: map[string]map[string]gjson.Result{}}
}

// digest is the digest of the value at path p (as harn/template spells a
// path: name, .key, ["key"], [N]): BLAKE3 of its canonical JSON after
// Harn's redact_json; of no bytes when p is bound to nothing.
func (r *resolver) digest(p string) digest.Digest {
	raw, ok := r.lookup(p)
	if !ok {
		return digest.Bytes(nil)
	}
	b, err := redact.JSON([]byte(raw))
	if err != nil {
		return digest.Bytes(nil)
	}
	return digest.Bytes(b)
}

// lookup resolves a path as harn/template resolves it: a key into an
// object, an index into a list (negative from its end) or a string (a
// character); anything else is nothing.
func (r *resolver) lookup(p string) (string, bool) {
	full := p
	name := p
	if i := strings.IndexAny(p, ".["); i >= 0 {
		name, p = p[:i], p[i:]
	} else {
		p = ""
	}
	cur, ok := r.member("", r.root, name)
	for ok && p != "" {
		prefix := full[:len(full)-len(p)]
		var key string
		idx, isIndex := int64(0), false
		switch {
		case p[0] == '.':
			p = p[1:]
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			key, p = p[:end], p[end:]
		case strings.HasPrefix(p, `["`):
			end := stringEnd(p[1:])
			if end < 0 || end+2 >= len(p) || p[end+2] != ']' {
				return "", false
			}
			key, p = gjson.Parse(p[1:end+2]).Str, p[end+3:]
		default: // [N]
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return "", false
			}
			n, err := strconv.ParseInt(p[1:end], 10, 64)
			if err != nil {
				return "", false
			}
			idx, isIndex, p = n, true, p[end+1:]
		}
		switch {
		case !isIndex:
			cur, ok = r.member(prefix, cur, key)
		case cur.IsArray():
			items, seen := r.lists[prefix]
			if !seen {
				items = cur.Array()
				r.lists[prefix] = items
			}
			if idx < 0 {
				idx += int64(len(items))
			}
			if ok = idx >= 0 && idx < int64(len(items)); ok {
				cur = items[idx]
			}
		case cur.Type == gjson.String:
			ch, found := charAt(cur.Str, idx)
			if !found {
				return "", false
			}
			cur = gjson.Result{Type: gjson.String, Raw: string(pjson.AppendString(nil, ch)), Str: ch}
		default:
			return "", false
		}
	}
	if !ok {
		return "", false
	}
	return cur.Raw, true
}

// member is the value of member key of v, the object at path prefix,
// found by its exact name (not a gjson path).
func (r *resolver) member(prefix string, v gjson.Result, key string) (gjson.Result, bool) {
	if !v.IsObject() {
		return gjson.Result{}, false
	}
	m, seen := r.objects[prefix]
	if !seen {
		m = map[string]gjson.Result{}
		v.ForEach(func(k, val gjson.Result) bool {
			if _, dup := m[k.Str]; !dup { // checked already: no key is given twice
				m[k.Str] = val
			}
			return true
		})
		r.objects[prefix] = m
	}
	out, ok := m[key]
	return out, ok
}

// stringEnd is the index of the quote closing the JSON string s starts.
func stringEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// charAt is the i-th character of s (negative from the end).
func charAt(s string, i int64) (string, bool) {
	n := int64(utf8.RuneCountInString(s))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return "", false
	}
	for _, c := range s {
		if i == 0 {
			return string(c), true
		}
		i--
	}
	return "", false
}

// fit moves a template's spans from its rendered text to body, the
// fragment's body made of it: text itself, text trimmed, or a heading and
// text trimmed. Spans outside the trimmed text are dropped.
func fit(t *promptloom.Template, text, body string) *promptloom.Template {
	if t == nil || body == text {
		return t
	}
	trimmed := strings.TrimSpace(text)
	lead := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	shift := len(body) - len(trimmed) - lead
	out := *t
	out.Spans = spans.Cut(t.Spans, text, lead, lead+len(trimmed), shift)
	return &out
}

// renderPart renders an item of _system_fragments or of the profile when
// it is templated, making *body (given when *ok) the rendered text.
func (r *reader) renderPart(m object, item string, body *gjson.Result, ok *bool) (*promptloom.Template, error) {
	var tm templateItem
	if tm.takeAll(m); !tm.given() && !tm.bindings.Exists() {
		return nil, nil
	}
	if r.hasPrimary && strings.HasPrefix(item, "context_profile") {
		// The profile adds nothing beside _system_fragments: its
		// templates are not rendered, as a disabled item's are not.
		*body, *ok = gjson.Result{Type: gjson.String}, true
		return nil, nil
	}
	text, tmpl, err := r.render(item, &tm, *ok, "body")
	if err != nil {
		return nil, err
	}
	*body, *ok = gjson.Result{Type: gjson.String, Str: text}, true
	return tmpl, nil
}

// withTemplateKeys is known with the template keys: the keys an item of
// _system_fragments or of the profile may have.
func withTemplateKeys(known []string) []string { return slices.Concat(known, templateKeys) }
