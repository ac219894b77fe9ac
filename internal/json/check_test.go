package json

import (
	stdjson "encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFaultOrder: bytes that are not UTF-8 are reported first, wherever
// they are; then a syntax error, wherever it is; then the first other
// fault in the document's order.
func TestFaultOrder(t *testing.T) {
	tests := []struct {
		in   string
		kind error
		path string
		at   int
	}{
		{`{"a":1,"a":2} x` + "\xff", ErrInvalidUTF8, "", 15},
		{`{"a":1,"a":2,"b":[}`, ErrSyntax, "b[0]", 18},
		{`{"a":1e999,"b":1,"b":2}`, ErrRange, "a", 5},
		{`{"b":1,"b":2,"a":1e999}`, ErrDuplicateKey, "b", 7},
		{`{"a":1,"a":{"x":1,"x":2}}`, ErrDuplicateKey, "a", 7},
		{`{"b":1,"b":2,"a":1,"a":2}`, ErrDuplicateKey, "b", 7},
		{`["\ud800", {"k":1,"k":2}]`, ErrLoneSurrogate, "[0]", 8},
		{`["\ud800\x"]`, ErrSyntax, "[0]", 9},
		{`{"a":[{"k":1},{"k":2,"k":3}]}`, ErrDuplicateKey, "a[1].k", 21},
	}
	for _, tt := range tests {
		err := Check([]byte(tt.in), nil)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, tt.kind) || !errors.Is(err, ErrInvalid) || e.Path != tt.path || e.Offset != tt.at {
			t.Errorf("Check(%q) = %v; want %v at %q, byte %d", tt.in, err, tt.kind, tt.path, tt.at)
		}
	}
}

// TestOptionsAccept: each option lets its fault through, and nothing else.
func TestOptionsAccept(t *testing.T) {
	for _, tt := range []struct {
		in   string
		opts Options
		kind error
	}{
		{`{"a":1,"a":2}`, Options{DuplicateKeys: true}, ErrDuplicateKey},
		{`[1e999]`, Options{LargeNumbers: true}, ErrRange},
		{`["\udc00"]`, Options{LoneSurrogates: true}, ErrLoneSurrogate},
	} {
		if err := Check([]byte(tt.in), nil); !errors.Is(err, tt.kind) {
			t.Errorf("Check(%s) = %v, want %v", tt.in, err, tt.kind)
		}
		if err := Check([]byte(tt.in), &tt.opts); err != nil {
			t.Errorf("Check(%s, %+v) = %v", tt.in, tt.opts, err)
		}
	}
	// Keys compare as encoding/json decodes them: a lone half is U+FFFD.
	if err := Check([]byte(`{"\ud800":1,"\udbff":2}`), &Options{LoneSurrogates: true}); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("two lone halves: %v, want a key given twice", err)
	}
}

// TestUnquoteIsEncodingJSONs: Unquote decodes as encoding/json decodes, on
// random strings of escapes, lone and paired surrogate halves included.
func TestUnquoteIsEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 43))
	pieces := []string{"a", "é", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0041`, `\u00e9`, `\ud83d`, `\ude00`,
		`\ud83d\ude00`, `\uDBFF`, `\uFFFD`, `\u0000`, "𝄞"}
	for range 20000 {
		var b strings.Builder
		b.WriteByte('"')
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		b.WriteByte('"')
		tok := b.String()
		var want string
		if err := stdjson.Unmarshal([]byte(tok), &want); err != nil {
			t.Fatal(err)
		}
		if got := Unquote(tok); got != want {
			t.Fatalf("Unquote(%s) = %q, encoding/json %q", tok, got, want)
		}
	}
}

// sparse is up to n bytes of 'a', about one in every in them another byte
// a run search must tell apart: quotes, backslashes, control characters,
// bytes that are not ASCII, and neighbours of those.
func sparse(r *rand.Rand, n, every int) string {
	const alphabet = "aZ ~\x7f\x80\xc3\xff\"\\\x00\x1f\x20!/"
	b := make([]byte, r.IntN(n))
	for i := range b {
		b[i] = 'a'
		if r.IntN(every) == 0 {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
	return string(b)
}

// TestNextSpecial: the eight-byte search finds the first quote, backslash
// or control character within its reach, and any byte before it that is
// not ASCII, as a byte-at-a-time loop does, at every alignment.
func TestNextSpecial(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 53))
	for range 200000 {
		s := sparse(r, 60, 12)
		from := r.IntN(len(s) + 1)
		want, high := -1, false
		for i := from; i < len(s); i++ {
			if c := s[i]; c == '"' || c == '\\' || c < 0x20 {
				want = i
				break
			}
			high = high || s[i] >= 0x80
		}
		j, gotHigh, found := nextSpecial(s, from)
		switch {
		case found && (j != want || gotHigh != high):
			t.Fatalf("nextSpecial(%q, %d) = %d, %v; want %d, %v", s, from, j, gotHigh, want, high)
		case !found && want >= 0 && want < j:
			t.Fatalf("nextSpecial(%q, %d) missed %d (looked to %d)", s, from, want, j)
		case !found && j < from+32 && j+8 <= len(s):
			t.Fatalf("nextSpecial(%q, %d) stopped at %d", s, from, j)
		}
	}
}

// TestRunSearches: the eight-byte searches the writers use stop where a
// byte-at-a-time loop stops, at every alignment.
func TestRunSearches(t *testing.T) {
	r := rand.New(rand.NewPCG(59, 61))
	for range 200000 {
		s := sparse(r, 40, 8)
		from := r.IntN(len(s) + 1)
		canon, std := len(s), len(s)
		for i := len(s) - 1; i >= from; i-- {
			if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
				canon, std = i, i
			} else if c >= 0x80 {
				std = i
			}
		}
		if got := plainRun8(s, from); got != canon {
			t.Fatalf("plainRun8(%q, %d) = %d, want %d", s, from, got, canon)
		}
		if got := plainASCII(s, from); got != std {
			t.Fatalf("plainASCII(%q, %d) = %d, want %d", s, from, got, std)
		}
	}
}
