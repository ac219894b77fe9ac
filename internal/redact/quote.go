package redact

import (
	"strconv"
	"unicode/utf8"
)

// quoteLimit is how many characters of a value Quote keeps.
const quoteLimit = 80

// Quote returns s as a Go-quoted string for an error message: redacted
// first (a secret given in the wrong place is not printed), then cut to
// quoteLimit characters, with the full length said when it was cut.
func Quote(s string) string {
	r := String(s)
	if utf8.RuneCountInString(r) <= quoteLimit {
		return strconv.Quote(r)
	}
	n, cut := 0, len(r)
	for i := range r {
		if n == quoteLimit {
			cut = i
			break
		}
		n++
	}
	return strconv.Quote(r[:cut]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
