package json

import (
	"math/rand/v2"
	"strings"
	"testing"

	kit "github.com/promptloom/promptloom/internal/testkit/corpus"
)

// rebuild writes raw canonically from what Each finds in it, level by
// level: when Each splits every container as a parser would, the result is
// Encode's.
func rebuild(t *testing.T, raw string) string {
	t.Helper()
	i := skipSpace(raw, 0)
	if raw[i] != '{' && raw[i] != '[' {
		out, err := Encode([]byte(raw))
		if err != nil {
			t.Fatalf("Encode(%q): %v", raw, err)
		}
		return string(out)
	}
	type member struct{ key, val string }
	var ms []member
	Each(raw, func(key string, keyAt int, val string, valAt int) bool {
		if !strings.HasPrefix(raw[valAt:], val) || key != "" && !strings.HasPrefix(raw[keyAt:], key) {
			t.Fatalf("in %q: offsets %d/%d do not hold %q/%q", raw, keyAt, valAt, key, val)
		}
		if key != "" {
			key = Unquote(key)
		}
		ms = append(ms, member{key, rebuild(t, val)})
		return true
	})
	var b []byte
	if raw[i] == '[' {
		b = append(b, '[')
		for j, m := range ms {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, m.val...)
		}
		return string(append(b, ']'))
	}
	// Encode sorts the members: so does this.
	for j := 1; j < len(ms); j++ {
		for k := j; k > 0 && ms[k].key < ms[k-1].key; k-- {
			ms[k], ms[k-1] = ms[k-1], ms[k]
		}
	}
	b = append(b, '{')
	for j, m := range ms {
		if j > 0 {
			b = append(b, ',')
		}
		b = append(AppendString(b, m.key), ':')
		b = append(b, m.val...)
	}
	return string(append(b, '}'))
}

// TestEachSplitsAsTheParser: on every document Encode accepts among the
// syntax cases, the corpus and random mutations, rebuilding it from Each's
// members gives Encode's bytes.
func TestEachSplitsAsTheParser(t *testing.T) {
	docs := append(append([]string{
		` { "a" : [ 1 , { "b" : "c\"}" } , [ ] , { } ] , "d\u0065" : "\\" , "e" : "\\\"" } `,
		"{\"x\":\"a\\nb\\u00e9\\ud83d\\ude00\",\"y\":\"\\\\\\\\\",\"\\\"k\":false}",
		`[[[["deep"]]],{"a":{"b":{"c":null}}}]`, `{"x":"` + strings.Repeat(`a\"b`, 100) + `"}`,
	}, syntaxCases...), corpus(t)...)
	r := rand.New(rand.NewPCG(7, 11))
	alphabet := []byte("{}[]\":,\\ \t\n0123456789-+.eEtrufalsnxu")
	docs = append(docs, kit.Mutations(r, docs[:4], alphabet, 20000)...)
	n := 0
	for _, doc := range docs {
		want, err := Encode([]byte(doc))
		if err != nil {
			continue
		}
		n++
		if got := rebuild(t, doc); got != string(want) {
			t.Fatalf("rebuilt %q as\n%s\nEncode gives\n%s", doc, got, want)
		}
	}
	if n < 1000 {
		t.Fatalf("only %d documents checked", n)
	}
}

func TestEachStops(t *testing.T) {
	var keys []string
	Each(`{"a":1,"b":2,"c":3}`, func(key string, _ int, _ string, _ int) bool {
		keys = append(keys, key)
		return key != `"b"`
	})
	if strings.Join(keys, " ") != `"a" "b"` {
		t.Errorf("keys %q, want the walk to stop at b", keys)
	}
	Each(`"scalar"`, func(string, int, string, int) bool { t.Error("called for a scalar"); return true })
}

// FuzzEach holds Each to the parser on any document Encode accepts.
func FuzzEach(f *testing.F) {
	f.Add(`{"system":[{"content":"a b: c","rank":3},"x"],"n":[1.5,-2e3,true,null]}`)
	f.Add(`{"a\"":"\\","b":["\u00e9",{}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		if want, err := Encode([]byte(doc)); err == nil {
			if got := rebuild(t, doc); got != string(want) {
				t.Fatalf("rebuilt %q as %s, Encode gives %s", doc, got, want)
			}
		}
	})
}

func TestScalarEnd(t *testing.T) {
	for _, tt := range []struct {
		in  string
		end int
		ok  bool
	}{
		{`"ab" x`, 4, true}, {`"a\"b"`, 6, true}, {`"\ud800"`, 8, true}, {`"ab`, 3, false}, {`"\q"`, 1, false},
		{`12 `, 2, true}, {`01`, 1, true}, {`-0.5e+3x`, 7, true}, {`1.`, 2, false}, {`-`, 1, false}, {`1e999`, 5, true},
		{`truex`, 4, true}, {`nul`, 3, false}, {`x`, 0, false}, {`[`, 0, false},
	} {
		end, ok := ScalarEnd(tt.in, 0)
		if ok != tt.ok || ok && end != tt.end {
			t.Errorf("ScalarEnd(%q) = %d, %v; want %d, %v", tt.in, end, ok, tt.end, tt.ok)
		}
	}
}

func TestScanMembers(t *testing.T) {
	doc := ` {"a": [1, [2], {}], "b\u0061" : "x", "c":[], "d":[ ] , "e": {"f":[1,"\n2"]}} `
	d, err := Scan(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	top := d.Members
	want := []struct {
		key, val string
		items    int
	}{{"a", `[1, [2], {}]`, 3}, {"ba", `"x"`, 0}, {"c", `[]`, 0}, {"d", `[ ]`, 0}, {"e", `{"f":[1,"\n2"]}`, 0}}
	if len(top) != len(want) {
		t.Fatalf("members %+v", top)
	}
	for i, m := range top {
		if m.Key != want[i].key || doc[m.Start:m.End] != want[i].val || m.Items != want[i].items {
			t.Errorf("member %d: %q %q %d; want %+v", i, m.Key, doc[m.Start:m.End], m.Items, want[i])
		}
	}
	for i := range doc {
		if want := doc[i] == '"' && strings.HasPrefix(doc[i:], `"b\u`) || strings.HasPrefix(doc[i:], `"\n`); d.HasEscape(i) != want {
			t.Errorf("HasEscape(%d) = %v", i, !want)
		}
	}
	if d, err := Scan(`[1]`, nil); d.Members != nil || err != nil {
		t.Errorf("Scan of an array: %v, %v", d.Members, err)
	}
}

// TestMemberIter: walking a root member's list with the ends Scan recorded
// gives what walking it afresh gives, on every object among the documents
// TestEachSplitsAsTheParser reads.
func TestMemberIter(t *testing.T) {
	docs := append(append([]string{
		`{"a":[1,[2],{},[],{"b":[{"c":1}]}," ",true],"b":{"x":[{}]},"c":[],"d":[[[]]]}`,
		`{"system":[{"content":"a","rank":1},"x",{"content":"b\"}"}]}`,
	}, syntaxCases...), corpus(t)...)
	r := rand.New(rand.NewPCG(13, 17))
	alphabet := []byte("{}[]\":,\\ \t0123456789-+.eEtrufalsnxu")
	docs = append(docs, kit.Mutations(r, docs[:2], alphabet, 20000)...)
	n := 0
	for _, doc := range docs {
		d, err := Scan(doc, nil)
		if err != nil {
			continue
		}
		for _, m := range d.Members {
			if doc[m.Start] != '[' {
				continue
			}
			n++
			a, b := m.Iter(doc), NewIter(doc[m.Start:m.End])
			for {
				k1, ka1, v1, va1, ok1 := a.Next()
				k2, ka2, v2, va2, ok2 := b.Next()
				if k1 != k2 || ka1 != ka2 || v1 != v2 || va1 != va2 || ok1 != ok2 {
					t.Fatalf("%q, member %q: %q at %d, afresh %q at %d", doc, m.Key, v1, va1, v2, va2)
				}
				if !ok1 {
					break
				}
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d lists walked", n)
	}
}
