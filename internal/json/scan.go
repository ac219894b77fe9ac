package json

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// scanner reads one document in one pass: the cursor only moves forward,
// and open arrays and objects are a stack, not a recursion, so the cost is
// linear in the input at any depth and no input can exhaust the goroutine
// stack. It validates; it also records the root object's members (record)
// or builds the document's tree for the canonical writer (build).
type scanner struct {
	s    string
	i    int
	opts Options
	// syntaxOnly judges the grammar alone (not UTF-8, keys, ranges or
	// surrogates): the second look that finds a syntax error beyond a
	// fault of another kind, which it outranks.
	syntaxOnly bool
	record     bool
	build      bool
	members    *Members // when set, the root object's members go here

	stack []frame
	sets  []keySet // the keys of each open object, by depth
	doc   Doc      // record: what Scan returns
	start int      // where the current member of the root starts
	ends  []int32  // record: the ends of its container items, when it is a list
	items int      // the item count of the array closed last
	vals  []value  // build: the values of the open containers
	marks []int    // build: len(vals) when each open container opened
	err   *Error
}

// frame is one open array or object: small, and holding no pointer, so
// pushing one and setting its key cost little and no write barrier.
type frame struct {
	object  bool
	haveKey bool // an object's key is read and its value due or read
	keyAt   int  // where the object's current key starts (its quote)
	n       int  // the array's current index
}

// key returns f's current key, decoded.
func (f *frame) key(s string) string { return keyAt(s, f.keyAt) }

// keyAt decodes the key whose quote is at s[i].
func keyAt(s string, i int) string {
	tok := s[i:stringEnd(s, i)]
	if strings.IndexByte(tok, '\\') >= 0 {
		return unquote(tok)
	}
	return tok[1 : len(tok)-1]
}

// keySet holds the keys of one object: a short list, and a map once the
// object has many (most objects have a handful of keys).
type keySet struct {
	keys []string
	set  map[string]struct{}
}

// add records key and reports whether it was there already.
func (k *keySet) add(key string) (dup bool) {
	if k.set != nil {
		if _, ok := k.set[key]; ok {
			return true
		}
		k.set[key] = struct{}{}
		return false
	}
	for _, have := range k.keys {
		if have == key {
			return true
		}
	}
	k.keys = append(k.keys, key)
	if len(k.keys) > 16 {
		k.set = make(map[string]struct{}, 2*len(k.keys))
		for _, have := range k.keys {
			k.set[have] = struct{}{}
		}
	}
	return false
}

// reset empties the set for the next object, keeping the list's room.
func (k *keySet) reset() { k.keys, k.set = k.keys[:0], nil }

// scratch is a scanner's stack and key sets, kept between documents: a
// transcript's verifier checks thousands of lines, and growing both again
// for each was most of what checking one allocated.
type scratch struct {
	stack []frame
	sets  []keySet
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// lend gives p the room of a scanner before it.
func (p *scanner) lend() *scratch {
	sc := scratches.Get().(*scratch)
	p.stack, p.sets = sc.stack[:0], sc.sets
	return sc
}

// giveBack keeps p's room in sc for the next scanner, unless a deep
// document grew it past what documents usually need. The keys it held are
// cleared, so that the room does not keep this document alive.
func (p *scanner) giveBack(sc *scratch) {
	if cap(p.stack) > 64 {
		return
	}
	for i := range p.sets {
		k := &p.sets[i]
		clear(k.keys[:cap(k.keys)])
		k.reset()
	}
	sc.stack, sc.sets = p.stack, p.sets
	scratches.Put(sc)
}

// scanDocument checks s; with record it returns what it learned.
func scanDocument(s string, o *Options, record bool) (*Doc, error) {
	if Scanned != nil {
		Scanned(s)
	}
	p := scanner{s: s, record: record}
	if o != nil {
		p.opts = *o
	}
	if p.run(); p.err != nil {
		return nil, p.resolve()
	}
	return &p.doc, nil
}

// resolve turns the fault the one pass stopped at into the one reported:
// bytes that are not UTF-8 first, wherever they are; then a syntax error,
// wherever it is; then the fault itself.
func (p *scanner) resolve() *Error {
	if off := invalidUTF8(p.s); off >= 0 {
		return &Error{Offset: off, Detail: "invalid UTF-8", kind: ErrInvalidUTF8}
	}
	switch p.err.kind {
	case ErrDuplicateKey, ErrRange, ErrLoneSurrogate:
		q := scanner{s: p.s, syntaxOnly: true}
		if q.run(); q.err != nil {
			return q.err
		}
	}
	return p.err
}

// run scans the document, stopping at the first fault (p.err).
func (p *scanner) run() {
	const (
		wantValue = iota
		wantKey
		ended // a value has just been read
	)
	state := wantValue
	for {
		switch state {
		case wantValue:
			p.space()
			if p.i >= len(p.s) {
				p.endOfInput()
				return
			}
			if len(p.stack) == 1 {
				p.start = p.i // a member of the root, or an item
			}
			switch c := p.s[p.i]; c {
			case '{', '[':
				if len(p.stack) >= MaxDepth {
					p.syntax(c, "exceeded max depth")
					return
				}
				p.open(c == '{')
				p.i++
				p.space()
				if p.i < len(p.s) && (p.s[p.i] == '}' && c == '{' || p.s[p.i] == ']' && c == '[') {
					p.i++
					p.close(true)
					state = ended
				} else if c == '{' {
					state = wantKey
				}
				continue
			case '"':
				p.stringValue()
			case 't', 'f', 'n':
				p.literal()
			default:
				if c == '-' || c >= '0' && c <= '9' {
					p.number()
					break
				}
				p.syntax(c, "looking for beginning of value")
				return
			}
			if p.err != nil {
				return
			}
			state = ended
		case wantKey:
			// (Written out, not as a helper: this is the scanner's hot
			// loop, and a call per token costs a fifth on small tokens.)
			p.space()
			if p.i >= len(p.s) {
				p.endOfInput()
				return
			}
			if c := p.s[p.i]; c != '"' {
				p.syntax(c, "looking for beginning of object key string")
				return
			}
			if !p.key() {
				return
			}
			p.space()
			if p.i >= len(p.s) {
				p.endOfInput()
				return
			}
			if c := p.s[p.i]; c != ':' {
				p.syntax(c, "after object key")
				return
			}
			p.i++
			state = wantValue
		case ended:
			if len(p.stack) == 0 {
				p.space()
				if p.i < len(p.s) {
					p.syntax(p.s[p.i], "after top-level value")
					p.err.kind = ErrTrailing
				}
				return
			}
			f := &p.stack[len(p.stack)-1]
			if p.record && len(p.stack) == 1 && f.object {
				m := Member{Key: f.key(p.s), Start: p.start, End: p.i}
				if p.s[p.start] == '[' {
					m.Items, m.Ends, p.ends = p.items, p.ends, nil
				}
				p.doc.Members = append(p.doc.Members, m)
			}
			if p.members != nil && len(p.stack) == 1 && f.object {
				m := p.members
				m.keys, m.vals = append(m.keys, f.key(p.s)), append(m.vals, p.s[p.start:p.i])
			}
			if p.build && f.object {
				p.vals[len(p.vals)-1].key = f.key(p.s)
			}
			p.space()
			if p.i >= len(p.s) {
				p.endOfInput()
				return
			}
			c := p.s[p.i]
			switch {
			case c == ',':
				p.i++
				if f.object {
					f.haveKey = false
					state = wantKey
				} else {
					f.n++
					state = wantValue
				}
			case c == '}' && f.object, c == ']' && !f.object:
				p.i++
				p.close(false)
			case f.object:
				p.syntax(c, "after object key:value pair")
				return
			default:
				p.syntax(c, "after array element")
				return
			}
		}
	}
}

func (p *scanner) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// open pushes an array or object, its opening byte under the cursor.
func (p *scanner) open(object bool) {
	p.stack = append(p.stack, frame{object: object})
	if p.build {
		p.marks = append(p.marks, len(p.vals))
	}
	if object && !p.syntaxOnly && !p.opts.DuplicateKeys {
		d := len(p.stack) - 1
		for len(p.sets) <= d {
			p.sets = append(p.sets, keySet{})
		}
		p.sets[d].reset()
	}
}

// close pops the innermost array or object, its closing byte read; empty
// when nothing stood between its brackets.
func (p *scanner) close(empty bool) {
	f := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	if p.items = 0; !f.object && !empty {
		p.items = f.n + 1
	}
	// An item of a list that is a member of the root object.
	if p.record && len(p.stack) == 2 && p.stack[0].object && !p.stack[1].object && len(p.s) <= math.MaxInt32 {
		p.ends = append(p.ends, int32(p.i))
	}
	if !p.build {
		return
	}
	mark := p.marks[len(p.marks)-1]
	p.marks = p.marks[:len(p.marks)-1]
	kids := make([]value, len(p.vals)-mark)
	copy(kids, p.vals[mark:])
	clear(p.vals[mark:])
	p.vals = p.vals[:mark]
	v := value{kind: kArray, kids: kids}
	if f.object {
		v.kind = kObject
		byKey := func(a, b value) int { return strings.Compare(a.key, b.key) }
		if !slices.IsSortedFunc(kids, byKey) {
			slices.SortFunc(kids, byKey)
		}
	}
	p.vals = append(p.vals, v)
}

// key reads an object's key and records it, refusing one given twice.
func (p *scanner) key() bool {
	at := p.i
	escaped, ok := p.str()
	if !ok {
		return false
	}
	f := &p.stack[len(p.stack)-1]
	f.haveKey, f.keyAt = true, at
	if escaped && p.record {
		p.doc.Escaped = append(p.doc.Escaped, at)
	}
	if p.syntaxOnly || p.opts.DuplicateKeys {
		return true
	}
	key := p.s[at+1 : p.i-1]
	if escaped {
		key = unquote(p.s[at:p.i])
	}
	if p.sets[len(p.stack)-1].add(key) {
		p.fault(ErrDuplicateKey, at, "key given twice")
		p.err.Value = p.s[at:p.i]
		return false
	}
	return true
}

// stringValue reads a string value.
func (p *scanner) stringValue() {
	at := p.i
	escaped, ok := p.str()
	if escaped && p.record {
		p.doc.Escaped = append(p.doc.Escaped, at)
	}
	if !ok || !p.build {
		return
	}
	raw := p.s[at:p.i]
	s := raw[1 : len(raw)-1]
	if escaped {
		s = unquote(raw)
	}
	p.vals = append(p.vals, value{kind: kString, s: s})
}

// literal reads true, false or null, refusing anything else as
// encoding/json does, at the first byte that differs.
func (p *scanner) literal() {
	lit, k := "null", kNull
	switch p.s[p.i] {
	case 't':
		lit, k = "true", kTrue
	case 'f':
		lit, k = "false", kFalse
	}
	for j := 1; j < len(lit); j++ {
		if p.i+j < len(p.s) && p.s[p.i+j] == lit[j] {
			continue
		}
		// Worded only when it fails: every true, false and null of every
		// document passes through here.
		context := "in literal " + lit + " (expecting '" + lit[j:j+1] + "')"
		if p.i+j >= len(p.s) {
			p.i = len(p.s)
			p.syntax(' ', context)
			return
		}
		p.i += j
		p.syntax(p.s[p.i], context)
		return
	}
	p.i += len(lit)
	if p.build {
		p.vals = append(p.vals, value{kind: k})
	}
}

// number reads a number by JSON's grammar, failing where encoding/json
// fails, and (unless LargeNumbers) refuses one past the range of a double.
// What follows the number's last byte is for the caller to judge: 01 is
// the number 0, then a 1 where none may stand.
func (p *scanner) number() {
	s, start := p.s, p.i
	i := p.i
	// fail reports the byte at i (a space past the end, as encoding/json
	// pretends at the end of its input).
	fail := func(context string) {
		p.i = i
		if i >= len(s) {
			p.syntax(' ', context)
		} else {
			p.syntax(s[i], context)
		}
	}
	digit := func() bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	digits := func() {
		for digit() {
			i++
		}
	}
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digit():
		digits()
	default:
		fail("in numeric literal")
		return
	}
	plain := true
	if i < len(s) && s[i] == '.' {
		i++
		if !digit() {
			fail("after decimal point in numeric literal")
			return
		}
		digits()
		plain = false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digit() {
			fail("in exponent of numeric literal")
			return
		}
		digits()
		plain = false
	}
	p.i = i
	tok := s[start:i]
	// A plain integer of up to 308 digits is within a double's range.
	if !p.syntaxOnly && !p.opts.LargeNumbers && (!plain || len(tok) > 308) && !inRange(tok) {
		p.fault(ErrRange, start, "number out of range")
		p.err.Value = tok
		return
	}
	if p.build {
		p.vals = append(p.vals, value{kind: kNumber, s: tok})
	}
}

// inRange reports whether a number token is an integer serde_json keeps
// exact or reads as a finite double.
func inRange(tok string) bool {
	if exactInteger(tok) {
		return true
	}
	f, _ := strconv.ParseFloat(tok, 64)
	return !math.IsInf(f, 0)
}

// exactInteger reports whether a number token is an integer literal that
// serde_json reads exactly: it fits in a u64, or an i64 when negative.
// "-0" is not: serde_json reads it as the double -0.0.
func exactInteger(tok string) bool {
	if strings.ContainsAny(tok, ".eE") || tok == "-0" {
		return false
	}
	var err error
	if tok[0] == '-' {
		_, err = strconv.ParseInt(tok, 10, 64)
	} else {
		_, err = strconv.ParseUint(tok, 10, 64)
	}
	return err == nil
}

// syntax records a syntax error at the cursor, in encoding/json's words.
func (p *scanner) syntax(c byte, context string) {
	p.fault(ErrSyntax, p.i, "invalid character "+quoteChar(c)+" "+context)
}

// endOfInput records input that ends before its value does.
func (p *scanner) endOfInput() {
	p.fault(ErrSyntax, len(p.s), "unexpected end of JSON input")
}

// fault records the first fault, with the path to where the scan stands.
func (p *scanner) fault(kind error, offset int, detail string) {
	steps := make([]Step, 0, len(p.stack))
	for _, f := range p.stack {
		switch {
		case !f.object:
			steps = append(steps, Step{Index: f.n})
		case f.haveKey:
			steps = append(steps, Step{Key: f.key(p.s), Index: -1})
		}
	}
	p.err = &Error{Path: pathString(steps), Steps: steps, Offset: offset, Detail: detail, kind: kind}
}
