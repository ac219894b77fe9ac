package canon

import (
	"slices"
	"strconv"
	"strings"
)

type kind uint8

const (
	kNull kind = iota
	kFalse
	kTrue
	kNumber
	kString
	kArray
	kObject
)

// value is one parsed JSON value. Object members carry their key; an
// object's members are kept sorted by key once parsed.
type value struct {
	kind kind
	s    string // a string's decoded text, a number's token
	key  string // the member's key, inside an object
	at   int    // offset of the member's key (objects) or of the value
	kids []value
}

// parser reads one JSON document in one pass: the cursor only moves
// forward, so the cost is linear in the input at any depth.
type parser struct {
	src   string
	pos   int
	depth int
	path  []step // the path to the value being read, for errors

	scratch []byte
	// stack holds the members of the containers being read; a container
	// closed takes its own off the top in one exact-size slice.
	stack []value
}

// take moves the values above mark off the stack into a slice of their own.
func (p *parser) take(mark int) []value {
	kids := make([]value, len(p.stack)-mark)
	copy(kids, p.stack[mark:])
	clear(p.stack[mark:])
	p.stack = p.stack[:mark]
	return kids
}

type step struct {
	key   string
	index int // -1 for a key
}

func parse(raw []byte) (value, error) {
	if off := InvalidUTF8(raw); off >= 0 {
		return value{}, &Error{Offset: off, Detail: "invalid UTF-8"}
	}
	p := parser{src: string(raw)}
	p.space()
	v, err := p.value()
	if err != nil {
		return value{}, err
	}
	p.space()
	if p.pos < len(p.src) {
		return value{}, p.fail("trailing data after the value")
	}
	return v, nil
}

func (p *parser) pathString() string {
	var b strings.Builder
	for i, s := range p.path {
		// a path thousands of levels deep is cut to its ends
		if n := len(p.path); n > 24 && i >= 12 && i < n-12 {
			if i == 12 {
				b.WriteString("…")
			}
			continue
		}
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

func (p *parser) fail(detail string) *Error {
	return &Error{Path: p.pathString(), Offset: p.pos, Detail: detail}
}

func (p *parser) space() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (value, error) {
	if p.pos >= len(p.src) {
		return value{}, p.fail("unexpected end of input")
	}
	at := p.pos
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		return value{kind: kString, s: s, at: at}, err
	case c == '-' || (c >= '0' && c <= '9'):
		s, err := p.number()
		return value{kind: kNumber, s: s, at: at}, err
	}
	for _, lit := range [...]struct {
		text string
		k    kind
	}{{"null", kNull}, {"true", kTrue}, {"false", kFalse}} {
		if strings.HasPrefix(p.src[p.pos:], lit.text) {
			p.pos += len(lit.text)
			return value{kind: lit.k, at: at}, nil
		}
	}
	return value{}, p.fail("expected a value")
}

func (p *parser) enter() error {
	if p.depth++; p.depth > MaxDepth {
		return p.fail("nested deeper than " + strconv.Itoa(MaxDepth) + " levels")
	}
	return nil
}

func (p *parser) array() (value, error) {
	v := value{kind: kArray, at: p.pos}
	if err := p.enter(); err != nil {
		return v, err
	}
	p.pos++
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		p.depth--
		return v, nil
	}
	p.path = append(p.path, step{})
	mark := len(p.stack)
	for i := 0; ; i++ {
		p.path[len(p.path)-1] = step{index: i}
		p.space()
		item, err := p.value()
		if err != nil {
			return v, err
		}
		p.stack = append(p.stack, item)
		p.space()
		if p.pos >= len(p.src) {
			return v, p.fail("unexpected end of input in an array")
		}
		if c := p.src[p.pos]; c == ']' {
			p.pos++
			break
		} else if c != ',' {
			return v, p.fail("expected ',' or ']'")
		}
		p.pos++
	}
	p.path = p.path[:len(p.path)-1]
	v.kids = p.take(mark)
	p.depth--
	return v, nil
}

func (p *parser) object() (value, error) {
	v := value{kind: kObject, at: p.pos}
	if err := p.enter(); err != nil {
		return v, err
	}
	p.pos++
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		p.depth--
		return v, nil
	}
	p.path = append(p.path, step{index: -1})
	mark := len(p.stack)
	for {
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return v, p.fail("expected a key")
		}
		at := p.pos
		key, err := p.str()
		if err != nil {
			return v, err
		}
		p.path[len(p.path)-1] = step{key: key, index: -1}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return v, p.fail("expected ':'")
		}
		p.pos++
		p.space()
		item, err := p.value()
		if err != nil {
			return v, err
		}
		item.key, item.at = key, at
		p.stack = append(p.stack, item)
		p.space()
		if p.pos >= len(p.src) {
			return v, p.fail("unexpected end of input in an object")
		}
		if c := p.src[p.pos]; c == '}' {
			p.pos++
			break
		} else if c != ',' {
			return v, p.fail("expected ',' or '}'")
		}
		p.pos++
	}
	p.path = p.path[:len(p.path)-1]
	v.kids = p.take(mark)
	if err := p.sortMembers(v.kids); err != nil {
		return v, err
	}
	p.depth--
	return v, nil
}

// sortMembers sorts an object's members by the UTF-8 bytes of their keys
// and rejects a key given twice, naming its second copy.
func (p *parser) sortMembers(ms []value) error {
	byKey := func(a, b value) int { return strings.Compare(a.key, b.key) }
	if !slices.IsSortedFunc(ms, byKey) {
		slices.SortStableFunc(ms, byKey)
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].key == ms[i-1].key {
			second := max(ms[i].at, ms[i-1].at)
			p.path = append(p.path, step{key: ms[i].key, index: -1})
			err := &Error{Path: p.pathString(), Offset: second, Detail: "key given twice", kind: ErrDuplicateKey}
			p.path = p.path[:len(p.path)-1]
			return err
		}
	}
	return nil
}
