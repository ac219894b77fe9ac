package options

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	pjson "github.com/promptloom/promptloom/internal/json"
	kit "github.com/promptloom/promptloom/internal/testkit/corpus"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/tidwall/gjson"
)

// sameResult compares the fields of two gjson Results that Parse reads.
func sameResult(a, b gjson.Result) bool {
	return a.Type == b.Type && a.Raw == b.Raw && a.Str == b.Str && a.Index == b.Index &&
		(a.Num == b.Num || math.IsNaN(a.Num) && math.IsNaN(b.Num))
}

// agree walks doc with each and with gjson's ForEach, at every depth, and
// reports the first place they differ.
func agree(t *testing.T, doc string) {
	t.Helper()
	d, err := pjson.Scan(doc, readOptions)
	if err != nil {
		t.Fatalf("%q: %v", clip(doc), err)
	}
	r := &reader{doc: d}
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		type pair struct{ k, v gjson.Result }
		var got, want []pair
		r.each(v, func(k, val gjson.Result) bool { got = append(got, pair{k, val}); return true })
		v.ForEach(func(k, val gjson.Result) bool { want = append(want, pair{k, val}); return true })
		if len(got) != len(want) {
			t.Fatalf("in %q: each gave %d members of %q, ForEach %d", clip(doc), len(got), clip(v.Raw), len(want))
		}
		for i := range got {
			if !sameResult(got[i].k, want[i].k) || !sameResult(got[i].v, want[i].v) {
				t.Fatalf("in %q, member %d of %q:\neach    %+v = %+v\nForEach %+v = %+v", clip(doc), i, clip(v.Raw), got[i].k, got[i].v, want[i].k, want[i].v)
			}
			if got[i].v.Type == gjson.JSON {
				walk(got[i].v)
			}
		}
	}
	walk(gjson.Parse(doc))
}

// TestEachAgrees: on every well-formed document here, in the fuzz corpus
// and among random mutations, each gives exactly ForEach's members.
func TestEachAgrees(t *testing.T) {
	n := 0
	for _, doc := range testDocs(t) {
		if wellFormed(doc) {
			agree(t, doc)
			n++
		}
	}
	if n < 1000 {
		t.Fatalf("only %d well-formed documents checked", n)
	}
}

// TestScanTopLevel: the root members Scan records are those each finds,
// in document order, with each list's length.
func TestScanTopLevel(t *testing.T) {
	n := 0
	for _, doc := range testDocs(t) {
		d, err := pjson.Scan(doc, readOptions)
		if err != nil {
			continue
		}
		root, r := gjson.Parse(doc), &reader{doc: d}
		var want []pjson.Member
		if root.IsObject() {
			r.each(root, func(k, v gjson.Result) bool {
				m := pjson.Member{Key: k.Str, Start: v.Index, End: v.Index + len(v.Raw)}
				if v.IsArray() {
					r.each(v, func(_, _ gjson.Result) bool { m.Items++; return true })
				}
				want = append(want, m)
				return true
			})
			n++
		}
		if diff := cmp.Diff(want, d.Members, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(pjson.Member{}, "Ends")); diff != "" {
			t.Fatalf("%q (-each +scan):\n%s", clip(doc), diff)
		}
	}
	if n < 500 {
		t.Fatalf("only %d objects checked", n)
	}
}

// testDocs is documents at JSON's edges, the fuzz corpus, and random
// mutations of them, well-formed or not.
func testDocs(t *testing.T) []string {
	t.Helper()
	docs := []string{
		`{"system":[{"content":"a b: c","rank":3},"x"],"tools":[{"name":"t"}],"n":[1.5,-2e3,true,null,-0,1E+2]}`,
		` { "a" : [ 1 , { "b" : "c\"}" } , [ ] , { } ] , "d\u0065" : "\\" , "e" : "\\\"" } `,
		"{\"x\":\"a\\nb\\u00e9\\ud83d\\ude00\",\"y\":\"\\\\\\\\\",\"\\\"k\":false}",
		`[[[["deep"]]],{"a":{"b":{"c":null}}}]`, `{}`, `[]`, `"s"`, `12`, `null`,
		`{"x":"` + strings.Repeat(`a\"b`, 100) + `"}`,
	}
	docs = append(docs, wellFormedCases...)
	docs = append(docs, kit.Docs(t)...)
	r := rand.New(rand.NewPCG(7, 11))
	alphabet := []byte("{}[]\":,\\ \t\n0123456789-+.eEtrufalsnxu\xc3\xa9")
	for range 20000 {
		docs = append(docs, string(kit.Mutate(r, []byte(docs[r.IntN(10)]), alphabet)))
	}
	return docs
}

// FuzzEach holds each to gjson's ForEach on any well-formed document.
func FuzzEach(f *testing.F) {
	f.Add(`{"system":[{"content":"a b: c","rank":3},"x"],"n":[1.5,-2e3,true,null]}`)
	f.Add(`{"a\"":"\\","b":["\u00e9",{}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		if wellFormed(doc) {
			agree(t, doc)
		}
	})
}
