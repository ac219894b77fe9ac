package options

import (
	"encoding/json"
	"math"
	"strconv"
)

// keySet holds the keys of one object: a short list, and a map once the
// object has many (most objects have a handful of keys). Both the one-pass
// scan and checkDocument keep one per open object.
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

// frame is one open object or list of the document being scanned.
type frame struct {
	object  bool
	wantKey bool
	key     string // the object's current key
	n       int    // the list's current index
	keys    keySet
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
			if f.keys.add(key) {
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
