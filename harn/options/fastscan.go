package options

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"unicode/utf8"

	canon "github.com/promptloom/promptloom/internal/json"
)

// maxDepth is encoding/json's nesting limit, and canonical JSON's: a
// document nested deeper is malformed to json.Valid.
const maxDepth = canon.MaxDepth

// scan reports, in one pass over s, whether s passes every check Parse
// makes before reading: UTF-8 (canon.InvalidUTF8), JSON syntax with
// encoding/json's nesting limit (checkSyntax), no key given twice in an
// object and no number past float range (checkDocument). It says only yes
// or no: on no, Parse runs those checks one by one, and they give the error
// with its offset or path. It agrees with them exactly on every document:
// TestWellFormedAgrees and FuzzWellFormed hold it to that.
//
// On the way it records the members of the document's root object (when
// the root is one): Parse then reads the top level without scanning the
// document again to find where each value ends.
//
// Strings, which are nearly all of an options file, are checked a run at a
// time: the closing quote and any backslash are found with a vectorised
// search, control characters eight bytes at a time, UTF-8 by utf8.ValidString
// (only for a run that is not all ASCII).
func scan(s string) ([]topMember, bool) {
	p := scanner{s: s}
	p.skipSpace()
	if !p.value() {
		return nil, false
	}
	p.skipSpace()
	return p.top, p.i == len(s)
}

// topMember is one member of the root object: its key, where its value
// lies in the document, and how many items it has when it is a list.
type topMember struct {
	key        string
	start, end int
	items      int
}

type scanner struct {
	s     string
	i     int
	depth int
	sets  []keySet // the keys of each open object, by depth
	top   []topMember
	items int // the item count of the list scanned last
}

func (p *scanner) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value scans one value starting at p.i (space skipped).
func (p *scanner) value() bool {
	if p.i >= len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '"':
		_, ok := p.str()
		return ok
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return false
}

func (p *scanner) literal(lit string) bool {
	if !strings.HasPrefix(p.s[p.i:], lit) {
		return false
	}
	p.i += len(lit)
	return true
}

func (p *scanner) object() bool {
	if p.depth++; p.depth > maxDepth {
		return false
	}
	p.i++ // {
	// One key set per depth (lists' stay empty), reused from object to
	// object.
	d := p.depth - 1
	for len(p.sets) <= d {
		p.sets = append(p.sets, keySet{})
	}
	p.sets[d].reset()
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		p.depth--
		return true
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return false
		}
		key, ok := p.str()
		if !ok {
			return false
		}
		if p.sets[d].add(key) {
			return false
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return false
		}
		p.i++
		p.skipSpace()
		start := p.i
		if !p.value() {
			return false
		}
		if p.depth == 1 {
			m := topMember{key: key, start: start, end: p.i}
			if p.s[start] == '[' {
				m.items = p.items
			}
			p.top = append(p.top, m)
		}
		if done, ok := p.next('}'); !ok || done {
			return ok
		}
	}
}

// next reads what follows a member or an item: a comma (more to come) or
// the closing byte of the container, which it leaves.
func (p *scanner) next(closing byte) (done, ok bool) {
	p.skipSpace()
	if p.i >= len(p.s) {
		return false, false
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		p.skipSpace()
		return false, true
	case closing:
		p.i++
		p.depth--
		return true, true
	}
	return false, false
}

func (p *scanner) array() bool {
	if p.depth++; p.depth > maxDepth {
		return false
	}
	p.i++ // [
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		p.depth--
		p.items = 0
		return true
	}
	for n := 1; ; n++ {
		if !p.value() {
			return false
		}
		if done, ok := p.next(']'); !ok || done {
			p.items = n
			return ok
		}
	}
}

// str scans a string starting at its opening quote and returns its value
// as a key compares (unescaped when it holds an escape).
func (p *scanner) str() (string, bool) {
	start := p.i
	p.i++
	escaped := false
	for {
		rest := p.s[p.i:]
		q := strings.IndexByte(rest, '"')
		if q < 0 {
			return "", false
		}
		run := rest[:q]
		bs := strings.IndexByte(run, '\\')
		if bs >= 0 {
			run = run[:bs]
		}
		if !plainRun(run) {
			return "", false
		}
		if bs < 0 {
			p.i += q + 1
			break
		}
		// An escape: check it and go on after it (the quote found may
		// be the escaped one, so it is searched for again).
		escaped = true
		p.i += bs + 1
		if p.i >= len(p.s) {
			return "", false
		}
		switch p.s[p.i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p.i++
		case 'u':
			if p.i+5 > len(p.s) {
				return "", false
			}
			for _, h := range []byte(p.s[p.i+1 : p.i+5]) {
				if !isHex(h) {
					return "", false
				}
			}
			p.i += 5
		default:
			return "", false
		}
	}
	raw := p.s[start:p.i]
	if !escaped {
		return raw[1 : len(raw)-1], true
	}
	// Keys compare unescaped, as checkDocument compares them.
	var key string
	if err := json.Unmarshal([]byte(raw), &key); err != nil {
		return "", false
	}
	return key, true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// plainRun reports whether a run of string bytes (no quote, no backslash)
// holds no control character and is UTF-8.
func plainRun(run string) bool {
	i := 0
	var high uint64 // the high bits seen: none means ASCII, UTF-8 already
	for ; i+8 <= len(run); i += 8 {
		// A byte below 0x20 has its high bit set in x-0x20..20 and clear
		// in x; bytes of 0x80 and up are cleared by ^x.
		x := binary.LittleEndian.Uint64([]byte(run[i : i+8]))
		if (x-0x2020202020202020)&^x&0x8080808080808080 != 0 {
			return false
		}
		high |= x
	}
	for ; i < len(run); i++ {
		if run[i] < 0x20 {
			return false
		}
		high |= uint64(run[i])
	}
	return high&0x8080808080808080 == 0 || utf8.ValidString(run)
}

// number scans a number as JSON spells it. A plain integer of up to 308
// digits is within float range; anything longer, or with a fraction or an
// exponent, is checked as checkDocument checks it.
func (p *scanner) number() bool {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i >= len(p.s) {
		return false
	}
	if p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return false
	}
	plain := true
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		plain = false
		if digits() == 0 {
			return false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		plain = false
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return false
		}
	}
	if plain && p.i-start <= 308 {
		return true
	}
	return numberInRange(p.s[start:p.i])
}
