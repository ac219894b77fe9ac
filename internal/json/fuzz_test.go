package json

import (
	stdjson "encoding/json"
	"strings"
	"testing"
)

// FuzzEncode: whatever Encode accepts, encoding/json accepts too, and the
// encoding is a fixed point; whatever it refuses is an *Error, never a panic.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.0,-0,1e400]}`, `"\ud83d\ude00\u2028"`, `[9007199254740993,-9223372036854775809]`,
		`{"a":1,"a":2}`, `[[[[[]]]]]`, `{"x-api-key":{"k":"v"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := EncodeRedacted(data, nil, sensitive)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			return
		}
		if !stdjson.Valid(data) || !stdjson.Valid(out) {
			t.Fatalf("accepted %q, wrote %q: one is not JSON", data, out)
		}
		again, err := EncodeRedacted(out, nil, sensitive)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not a fixed point: %q -> %q -> %q (%v)", data, out, again, err)
		}
	})
}

// sensitive stands in for harn/redact's key rule: any key holding "key".
func sensitive(k string) bool { return strings.Contains(strings.ToLower(k), "key") }
