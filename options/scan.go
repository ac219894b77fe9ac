package options

import (
	"encoding/json"
	"math"
	"strconv"
)

// frame is one open object or list of the document being scanned.
type frame struct {
	object  bool
	path    string
	keys    map[string]struct{}
	key     string // the object's current key
	n       int    // the list's current index
	wantKey bool
}

func (f *frame) child() string {
	if f.object {
		return field(f.path, f.key)
	}
	return index(f.path, f.n)
}

// checkDocument walks a well-formed JSON document once, without recursion,
// and rejects what encoding/json accepts but no reader agrees on: an object
// key given twice (JSON parsers differ on which copy wins, so a tool could be
// guided as one name and registered as another) and a number too large for
// a float (serde_json refuses it). The error names the JSON path.
func checkDocument(data []byte) error {
	var stack []*frame
	top := func() *frame {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	path := func() string {
		if f := top(); f != nil {
			return f.child()
		}
		return ""
	}
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case ' ', '\t', '\n', '\r', ':':
		case '{':
			stack = append(stack, &frame{object: true, path: path(), wantKey: true})
		case '[':
			stack = append(stack, &frame{path: path()})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if f := top(); f.object {
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
			f := top()
			if f == nil || !f.object || !f.wantKey {
				continue
			}
			key := string(data[start+1 : i])
			if escaped {
				if err := json.Unmarshal(data[start:i+1], &key); err != nil {
					return errorf(ErrSyntax, "", start, "malformed JSON: %v", err)
				}
			}
			if f.keys == nil {
				f.keys = map[string]struct{}{}
			}
			f.key, f.wantKey = key, false
			if _, dup := f.keys[key]; dup {
				return errorf(ErrDuplicateKey, f.child(), start, "key given twice")
			}
			f.keys[key] = struct{}{}
		default:
			start := i
			for i+1 < len(data) && isNumberByte(data[i+1]) {
				i++
			}
			if c == '-' || (c >= '0' && c <= '9') {
				raw := string(data[start : i+1])
				if _, ok := intLiteral(raw); !ok {
					if f, _ := strconv.ParseFloat(raw, 64); math.IsInf(f, 0) {
						return errorf(ErrValue, path(), start, "number %s is out of range", quote(raw))
					}
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
