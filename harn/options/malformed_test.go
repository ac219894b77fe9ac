package options

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	pjson "github.com/promptloom/promptloom/internal/json"
	kit "github.com/promptloom/promptloom/internal/testkit/corpus"
)

// The checks Parse made before internal/json read its input, kept as the
// reference its errors are held to: the UTF-8 scan, encoding/json's
// Decoder for the syntax, then a walk of the document for a key given twice
// and a number past float range. (It has one kind for all, as Parse has
// now: ErrMalformed.)
func oldCheck(data []byte) error {
	if off := pjson.InvalidUTF8(data); off >= 0 {
		return located(errorf(ErrMalformed, "", off, "invalid UTF-8"))
	}
	if err := oldSyntax(data); err != nil {
		return err
	}
	return oldDocument(data)
}

func oldSyntax(data []byte) error {
	if json.Valid(data) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil {
		if _, err := dec.Token(); err != io.EOF {
			return located(errorf(ErrMalformed, "", int(dec.InputOffset()), "malformed JSON: data after the top-level value"))
		}
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return located(errorf(ErrMalformed, "", int(se.Offset), "malformed JSON: %s", se.Error()))
	}
	return located(errorf(ErrMalformed, "", len(data), "malformed JSON: %s", err.Error()))
}

type oldFrame struct {
	object  bool
	wantKey bool
	key     string
	n       int
	keys    map[string]bool
}

func oldDocument(data []byte) error {
	var stack []oldFrame
	path := func() string {
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
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case ' ', '\t', '\n', '\r', ':':
		case '{':
			stack = append(stack, oldFrame{object: true, wantKey: true, keys: map[string]bool{}})
		case '[':
			stack = append(stack, oldFrame{})
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
			for i++; data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			if len(stack) == 0 || !stack[len(stack)-1].object || !stack[len(stack)-1].wantKey {
				continue
			}
			f := &stack[len(stack)-1]
			var key string
			if err := json.Unmarshal(data[start:i+1], &key); err != nil {
				return err
			}
			f.key, f.wantKey = key, false
			if f.keys[key] {
				return errorf(ErrMalformed, path(), start, "key given twice")
			}
			f.keys[key] = true
		default:
			start := i
			for i+1 < len(data) && strings.IndexByte("0123456789abcdefghijklmnopqrstuvwxyz.+-E", data[i+1]) >= 0 {
				i++
			}
			if c == '-' || (c >= '0' && c <= '9') {
				raw := string(data[start : i+1])
				if _, ok := intLiteral(raw); !ok {
					if f, _ := strconv.ParseFloat(raw, 64); math.IsInf(f, 0) {
						return errorf(ErrMalformed, path(), start, "number %s is out of range", quote(raw))
					}
				}
			}
		}
	}
	return nil
}

// wellFormedCases are documents at every edge the one-pass check decides:
// each must get the answer and the error the old checks give.
var wellFormedCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `-0.0e-0`, `1E+2`, `true`, `false`, `null`, ` { } `,
	`{"a":1}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":{"a":1},"b":{"a":2}}`,
	`{"x":[1e999]}`, `{"x":-1e309}`, `{"x":1e308}`, `{"x":9223372036854775808}`,
	`{"x":` + strings.Repeat("9", 308) + `}`, `{"x":` + strings.Repeat("9", 309) + `}`,
	`{"x":` + strings.Repeat("1", 400) + `.5}`, `{"x":01}`, `{"x":1.}`, `{"x":.5}`, `{"x":-}`,
	`{"x":1e}`, `{"x":+1}`, `{"x":0x1}`, `{"x":tru}`, `{"x":nul}`, `{"x":truex}`,
	"{\"x\":\"a\tb\"}", "{\"x\":\"a\x1fb\"}", "{\"x\":\"a\x7fb\"}", "{\"x\":\"\xff\"}",
	"{\"x\":\"\xe2\x82\"}", "{\"x\":\"\xe2\x82\xac\"}", "{\"x\":\"\xed\xa0\x80\"}", "\xef\xbb\xbf{}",
	`{"x":"\"}`, `{"x":"\\"}`, `{"x":"\q"}`, `{"x":"\u12"}`, `{"x":"\u12G4"}`, `{"x":"\uD800"}`,
	`{"x":"a\"b\"c","x":1}`, `{"a\"":1,"a\u0022":2}`, `{"x":1,}`, `[1,]`, `[,1]`, `{"x" 1}`,
	`{"x":1}}`, `{"x":1} x`, `{"x":1}` + "\n", `{"x"`, `{`, `[`, `"abc`, ``, ` `, `{1:2}`,
	`{} {}`, `{} []`, `{} ]`, `{} :`, `{} "a"`, `{} "a`, `{} 12 `, `{} 12`, `{} 1.`, `{} 01`, `{} 1e999`,
	`{} tru`, `{} truex`, `{} x`, `1x`, `1 2`, `"a" "b"`, `{"\ud800":1,"\udbff":2}`, `{"a":1,"a":2,"b":[}`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":3}`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":3}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	"{\"x\":\"" + strings.Repeat("ab\\n", 1000) + "\"}",
}

// wellFormed is whether Parse's check accepts doc.
func wellFormed(doc string) bool {
	_, err := pjson.Scan(doc, readOptions)
	return err == nil
}

// sameCheck fails t unless Parse refuses doc before reading it exactly as
// the old checks did (the same kind, message and offset), or both accept
// it.
func sameCheck(t *testing.T, doc string) {
	t.Helper()
	want := oldCheck([]byte(doc))
	_, err := pjson.Scan(doc, readOptions)
	if want == nil {
		if err != nil {
			t.Fatalf("%q: refused (%v); the old checks accept it", clip(doc), malformed(doc, err))
		}
		return
	}
	if err == nil {
		t.Fatalf("%q: accepted; the old checks say %v", clip(doc), want)
	}
	got, w := malformed(doc, err), want.(*Error)
	if got.Error() != w.Error() || got.kind != ErrMalformed || got.Offset != w.Offset || got.Path != w.Path {
		t.Fatalf("%q:\n got %v (%v, offset %d, path %q)\nwant %v (%v, offset %d, path %q)", clip(doc),
			got, got.kind, got.Offset, got.Path, w, w.kind, w.Offset, w.Path)
	}
}

// TestMalformedAgrees: on the cases above, the fuzz corpus and random
// mutations of valid documents, Parse refuses what the old checks refused,
// with their very error, and accepts what they accepted.
func TestMalformedAgrees(t *testing.T) {
	for _, doc := range wellFormedCases {
		sameCheck(t, doc)
	}
	for _, doc := range kit.Docs(t) {
		sameCheck(t, doc)
	}
	r := rand.New(rand.NewPCG(3, 5))
	alphabet := []byte("{}[]\":,\\ \t\n0123456789-+.eEtrufalsnx\x00\x1f\x7f\x80\xc3\xa9\xff")
	seeds := wellFormedCases[:len(wellFormedCases)-4]
	for range 30000 {
		doc := []byte(seeds[r.IntN(len(seeds))])
		if r.IntN(2) == 0 {
			doc = []byte(`{"system":[{"content":"a b: c","rank":3},"x"],"tools":[{"name":"t"}],"n":[1.5,-2e3,true,null]}`)
		}
		sameCheck(t, string(kit.Mutate(r, doc, alphabet)))
	}
}

// FuzzWellFormed holds Parse's check to the old checks on any input.
func FuzzWellFormed(f *testing.F) {
	for _, doc := range wellFormedCases[:40] {
		f.Add(doc)
	}
	f.Fuzz(sameCheck)
}
