package transcript

import (
	"testing"
)

// A key given twice within one object is named by its path (escapes
// decoded: "a" and "\u0061" are one key); the same key in two objects is
// no problem.
func TestDuplicateKey(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"a":1,"b":{"c":[{"d":1,"e":2,"d":3}]}}`, "duplicate JSON key b.c[0].d"},
		{`{"a":1,"\u0061":2}`, "duplicate JSON key a"},
		{`{"x":[1,{"y":"}\"","y":0}]}`, "duplicate JSON key x[1].y"},
		{`{"a":{"k":1},"b":{"k":1}}`, ""},
		{`[{"a":1},{"a":1}]`, ""},
	} {
		if got := unreadable([]byte(tc.line)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.line, got, tc.want)
		}
	}
}
