package url

import "testing"

func TestLossyUTF8(t *testing.T) {
	// Rust's from_utf8_lossy: one U+FFFD per maximal ill-formed subpart.
	for in, want := range map[string]string{
		"a\xe2\x82b":       "a\ufffdb",
		"\xff\xfe":         "\ufffd\ufffd",
		"\xed\xa0\x80":     "\ufffd\ufffd\ufffd",
		"\xf0\x9f\x98":     "\ufffd",
		"ok\xc3\xa9":       "oké",
		"\xf4\x90\x80\x80": "\ufffd\ufffd\ufffd\ufffd",
	} {
		if got := lossyUTF8([]byte(in)); got != want {
			t.Errorf("lossyUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}
