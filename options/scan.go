package options

import (
	"encoding/json"
	"math"
	"strconv"
)

// frame is one open object or list of the document being scanned.
type frame struct {
	object  bool
	wantKey bool
	key     string // the object's current key
	n       int    // the list's current index
	keys    []string
	set     map[string]struct{} // keys, once the object has many
}

// seen records key in f and reports whether it was there already.
func (f *frame) seen(key string) bool {
	if f.set != nil {
		if _, ok := f.set[key]; ok {
			return true
		}
		f.set[key] = struct{}{}
		return false
	}
	for _, k := range f.keys {
		if k == key {
			return true
		}
	}
	f.keys = append(f.keys, key)
	if len(f.keys) > 16 {
		f.set = make(map[string]struct{}, 2*len(f.keys))
		for _, k := range f.keys {
			f.set[k] = struct{}{}
		}
		f.keys = nil
	}
	return false
}

// pathOf is the JSON path of the value the innermost frame is at.
func pathOf(stack []frame) string {
	p := ""
	for i := range stack {
		if stack[i].object {
			p = field(p, stack[i].key)
		} else {
			p = index(p, stack[i].n)
		}
	}
	return p
}

// checkDocument walks a well-formed JSON document once, without recursion,
// and rejects what encoding/json accepts but no reader agrees on: an object
// key given twice (JSON parsers differ on which copy wins, so a tool could be
// guided as one name and registered as another) and a number too large for
// a float (serde_json refuses it). The error names the JSON path.
func checkDocument(data []byte) error {
	var stack []frame
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case ' ', '\t', '\n', '\r', ':':
		case '{':
			stack = append(stack, frame{object: true, wantKey: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if f := &stack[len(stack)-1]; f.object {
				f.wantKey = true
			} else {
				f.n++
			}
		case '"':
			start := i
			escaped := false
			for i++; data[i] != '"'; i++ {
				if data[i] == '\\' {
					escaped = true
					i++
				}
			}
			if len(stack) == 0 || !stack[len(stack)-1].object || !stack[len(stack)-1].wantKey {
				continue
			}
			f := &stack[len(stack)-1]
			key := string(data[start+1 : i])
			if escaped {
				if err := json.Unmarshal(data[start:i+1], &key); err != nil {
					return errorf(ErrSyntax, "", start, "malformed JSON: %v", err)
				}
			}
			f.key, f.wantKey = key, false
			if f.seen(key) {
				return errorf(ErrDuplicateKey, pathOf(stack), start, "key given twice")
			}
		default:
			start := i
			for i+1 < len(data) && isNumberByte(data[i+1]) {
				i++
			}
			if c == '-' || (c >= '0' && c <= '9') {
				raw := string(data[start : i+1])
				if !numberInRange(raw) {
					return errorf(ErrValue, pathOf(stack), start, "number %s is out of range", quote(raw))
				}
			}
		}
	}
	return nil
}

// isNumberByte reports whether b continues a number or a literal (true,
// false, null).
func isNumberByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b == '.' || b == '+' || b == '-' || b == 'E'
}

// numberInRange reports whether a JSON number is an integer within 64 bits
// or reads as a finite float.
func numberInRange(raw string) bool {
	if _, ok := intLiteral(raw); ok {
		return true
	}
	f, _ := strconv.ParseFloat(raw, 64)
	return !math.IsInf(f, 0)
}
