package template

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Case mapping as Rust's str and char methods do it, which Harn's upper,
// lower, capitalize and title filters call: the full mappings (ß upper is
// SS, İ lower is i and a combining dot), and for str::to_lowercase a
// capital sigma that ends a word becomes ς.

func appendUpper(b *strings.Builder, r rune) {
	if s, ok := specialUpper[r]; ok {
		b.WriteString(s)
		return
	}
	b.WriteRune(unicode.ToUpper(r))
}

func appendLower(b *strings.Builder, r rune) {
	if s, ok := specialLower[r]; ok && utf8.RuneCountInString(s) > 1 {
		b.WriteString(s)
		return
	}
	b.WriteRune(unicode.ToLower(r))
}

func toUpper(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		appendUpper(&b, r)
	}
	return b.String()
}

func toLower(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		if r == 'Σ' {
			if finalSigma(s, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
			continue
		}
		appendLower(&b, r)
	}
	return b.String()
}

// finalSigma is Unicode's Final_Sigma condition for the Σ at byte i: a
// cased letter before it and none after it, case-ignorable characters
// skipped on both sides.
func finalSigma(s string, i int) bool {
	before := false
	for j := i; j > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
		if caseIgnorable(r) {
			continue
		}
		before = cased(r)
		break
	}
	if !before {
		return false
	}
	for _, r := range s[i+len("Σ"):] {
		if caseIgnorable(r) {
			continue
		}
		return !cased(r)
	}
	return true
}

func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', 0xA8, 0xAD, 0xAF, 0xB4, 0xB7, 0xB8, 0x387, 0x55F, 0x5F4, 0x2018, 0x2019,
		0x2024, 0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
