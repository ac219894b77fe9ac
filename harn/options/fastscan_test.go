package options

import (
	"math/rand/v2"
	"strings"
	"testing"

	canon "github.com/promptloom/promptloom/internal/json"
)

// wellFormed is scan's verdict alone.
func wellFormed(s string) bool {
	_, ok := scan(s)
	return ok
}

// oldChecks is what Parse checked before wellFormed: the UTF-8 scan, the
// syntax check and the document walk, one after another.
func oldChecks(data []byte) bool {
	return canon.InvalidUTF8(data) < 0 && checkSyntax(data) == nil && checkDocument(data) == nil
}

// wellFormedCases are documents at every edge the one-pass scan decides:
// each must get the answer the separate checks give.
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
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":3}`,
	`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":3}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	"{\"x\":\"" + strings.Repeat("ab\\n", 1000) + "\"}",
}

// TestWellFormedAgrees: the one-pass scan never accepts what one of the
// separate checks refuses, and accepts what they all accept, on the cases
// above, on the fuzz corpus, and on random mutations of valid documents.
func TestWellFormedAgrees(t *testing.T) {
	check := func(doc string) {
		t.Helper()
		if got, want := wellFormed(doc), oldChecks([]byte(doc)); got != want {
			t.Fatalf("wellFormed(%q) = %v, the separate checks say %v", clip(doc), got, want)
		}
	}
	for _, doc := range wellFormedCases {
		check(doc)
	}
	for _, doc := range corpusDocs(t) {
		check(doc)
	}
	r := rand.New(rand.NewPCG(3, 5))
	alphabet := []byte("{}[]\":,\\ \t\n0123456789-+.eEtrufalsnx\x00\x1f\x7f\x80\xc3\xa9\xff")
	for range 20000 {
		doc := []byte(wellFormedCases[r.IntN(len(wellFormedCases))])
		if r.IntN(2) == 0 {
			doc = []byte(`{"system":[{"content":"a b: c","rank":3},"x"],"tools":[{"name":"t"}],"n":[1.5,-2e3,true,null]}`)
		}
		check(string(mutate(r, doc, alphabet)))
	}
}

// FuzzWellFormed holds wellFormed to the separate checks on any input.
func FuzzWellFormed(f *testing.F) {
	for _, doc := range wellFormedCases[:40] {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if got, want := wellFormed(doc), oldChecks([]byte(doc)); got != want {
			t.Fatalf("wellFormed(%q) = %v, the separate checks say %v", doc, got, want)
		}
	})
}
