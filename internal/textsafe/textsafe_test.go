package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndBlock(t *testing.T) {
	for _, c := range []struct{ in, line, block string }{
		{"plain id", "plain id", "plain id"},
		{"system[0]", "system[0]", "system[0]"},
		{`back\slash`, `back\slash`, `back\slash`},
		{"héllo ✓ 日本", "héllo ✓ 日本", "héllo ✓ 日本"},
		{"a\nb", `a\nb`, "a\nb"},
		{"tab\there", `tab\there`, `tab\there`},
		{"cr\rover", `cr\rover`, `cr\rover`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
		{"nul\x00", `nul\x00`, `nul\x00`},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"c1\u0085\u009b", `c1\u0085\u009b`, `c1\u0085\u009b`},
		{"bidi\u202eevil", `bidi\u202eevil`, `bidi\u202eevil`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`, `isolate\u2066x\u2069`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"cut\xe2\x9c", `cut\xe2\x9c`, `cut\xe2\x9c`},
		{"replacement \ufffd char", `replacement \ufffd char`, `replacement \ufffd char`},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Block(c.in); got != c.block {
			t.Errorf("Block(%q) = %q, want %q", c.in, got, c.block)
		}
	}
}

// Whatever goes in, Line's output holds no control byte and is UTF-8, and
// Block's holds none but newlines; text with nothing to escape is
// returned as it is.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "id", "a\nb", "\x1b[2J", "\xff", "\u202e", "\u0085", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Block(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("not UTF-8: %q", out)
			}
			for _, r := range out {
				if r != '\n' && !Safe(r) {
					t.Fatalf("%q escaped to %q, which holds %U", s, out, r)
				}
			}
		}
		if strings.Contains(Line(s), "\n") {
			t.Fatalf("Line(%q) holds a newline", s)
		}
		if firstUnsafe(s, false) < 0 && Line(s) != s {
			t.Fatalf("Line changed safe text %q", s)
		}
	})
}
