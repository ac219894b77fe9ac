package json

import (
	stdjson "encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	kit "github.com/promptloom/promptloom/internal/testkit/corpus"
)

// lenient reads as encoding/json reads: the grammar and UTF-8 only.
var lenient = &Options{LoneSurrogates: true, DuplicateKeys: true, LargeNumbers: true}

// syntaxCases are documents at every edge of the grammar.
var syntaxCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `-0.0e-0`, `1E+2`, `true`, `false`, `null`, ` { } `, ` [ ] `,
	`{"a":1}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"x":[1e999]}`, `{"x":01}`, `{"x":1.}`,
	`{"x":.5}`, `{"x":-}`, `{"x":1e}`, `{"x":1e+}`, `{"x":+1}`, `{"x":0x1}`, `{"x":tru}`, `{"x":nul}`,
	`{"x":truex}`, `{"x":fals}`, `{"x":nulL}`, "{\"x\":\"a\tb\"}", "{\"x\":\"a\x1fb\"}", "{\"x\":\"a\x7fb\"}",
	"\xef\xbb\xbf{}", `{"x":"\"}`, `{"x":"\\"}`, `{"x":"\q"}`, `{"x":"\u12"}`, `{"x":"\u12G4"}`,
	`{"x":"\uD800"}`, `{"x":1,}`, `[1,]`, `[,1]`, `{"x" 1}`, `{"x":1}}`, `{"x":1} x`, `{"x":1}` + "\n",
	`{"x"`, `{"x":`, `{"x":1`, `{"x":1,`, `{`, `[`, `[1`, `[1,`, `"abc`, `"abc\`, `"\u`, `"\u00`, ``, ` `,
	`{1:2}`, `{'a':1}`, `NaN`, `-`, `1.`, `1e`, `1e-`, `tru`, `t`, `[1] 2`, `1 2`, `{}{}`, `{} {}`, `{},`,
	`[01]`, `-01`, `[-]`, `{"a" : 1 , "b" : [ true , false , null ] }`, `é`, `{"é":1}`, `{é:1}`, `[1é]`,
	`{"a":1 "b":2}`, `["a" "b"]`, `[1:2]`, `{"a",1}`, `{"a"}`, `{,}`, `[}`, `{]`, `]`, `}`, `:`, `,`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	strings.Repeat("[", 10001),
}

// corpus returns the documents of the package's fuzz corpora.
func corpus(t *testing.T) []string { return kit.Docs(t) }

// sameSyntax fails t unless Check, reading leniently, judges doc's grammar
// as encoding/json does: the same verdict, the same words, and the same
// offset (encoding/json counts the bytes read, the offending one included).
func sameSyntax(t *testing.T, doc string) {
	t.Helper()
	if invalidUTF8(doc) >= 0 {
		return // encoding/json reads bytes that are not UTF-8; Check refuses them first
	}
	got := Check([]byte(doc), lenient)
	var raw stdjson.RawMessage
	want := stdjson.Unmarshal([]byte(doc), &raw)
	if want == nil {
		if got != nil {
			t.Fatalf("Check(%q) = %v; encoding/json accepts it", clipped(doc), got)
		}
		return
	}
	var se *stdjson.SyntaxError
	if !errors.As(want, &se) {
		t.Fatalf("encoding/json: %T %v", want, want)
	}
	var e *Error
	if !errors.As(got, &e) || !errors.Is(got, ErrSyntax) {
		t.Fatalf("Check(%q) = %v; encoding/json says %v", clipped(doc), got, want)
	}
	off := e.Offset
	if off < len(doc) {
		off++
	}
	if e.Detail != se.Error() || int64(off) != se.Offset {
		t.Fatalf("Check(%q): %q at %d (byte %d); encoding/json: %q after %d bytes", clipped(doc), e.Detail, off, e.Offset, se.Error(), se.Offset)
	}
	if trailing := strings.HasSuffix(e.Detail, "after top-level value"); trailing != errors.Is(got, ErrTrailing) {
		t.Fatalf("Check(%q) = %v: ErrTrailing is %v", clipped(doc), got, !trailing)
	}
}

func clipped(s string) string {
	if len(s) > 120 {
		return s[:60] + "…" + s[len(s)-60:]
	}
	return s
}

// TestSyntaxIsEncodingJSONs: on the cases above, the fuzz corpus and
// random mutations of them, Check's syntax errors are encoding/json's.
func TestSyntaxIsEncodingJSONs(t *testing.T) {
	docs := append(append([]string{}, syntaxCases...), corpus(t)...)
	for _, doc := range docs {
		sameSyntax(t, doc)
	}
	r := rand.New(rand.NewPCG(3, 5))
	alphabet := []byte("{}[]\":,\\ \t\n\r0123456789-+.eEtrufalsnxu\x00\x1f\x7f'/bé")
	seeds := append(append(syntaxCases[:len(syntaxCases)-4:len(syntaxCases)-4], corpus(t)...),
		`{"system":[{"content":"a b: c","rank":3},"x"],"tools":[{"name":"t"}],"n":[1.5,-2e3,true,null]}`,
		` { "a" : [ 1 , { "b" : "c\"}" } , [ ] , { } ] , "d\u0065" : "\\" , "e" : "\\\"" } `)
	for _, doc := range kit.Mutations(r, seeds, alphabet, 50000) {
		sameSyntax(t, doc)
	}
}

// FuzzSyntax holds Check's syntax errors to encoding/json's on any input.
func FuzzSyntax(f *testing.F) {
	for _, doc := range syntaxCases[:len(syntaxCases)-4] {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) { sameSyntax(t, doc) })
}
