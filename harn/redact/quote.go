package redact

import (
	"strconv"
	"unicode/utf8"
)

// QuoteLimit is how many characters of a value Quote keeps.
const QuoteLimit = 80

// Quote returns s as a Go-quoted string for an error message: redacted
// first (a secret given in the wrong place is not printed), then cut to
// QuoteLimit characters, with the full length said when it was cut.
func Quote(s string) string {
	r := String(s)
	if utf8.RuneCountInString(r) <= QuoteLimit {
		return strconv.Quote(r)
	}
	n, cut := 0, len(r)
	for i := range r {
		if n == QuoteLimit {
			cut = i
			break
		}
		n++
	}
	return strconv.Quote(r[:cut]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
