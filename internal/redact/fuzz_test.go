package redact

import (
	"slices"
	"testing"
)

// FuzzRedact holds the fast scanner and the hand matchers to the reference
// (one Go regexp per pattern, run at every position, one pass, in order),
// and the windowed scan to the reference's windowed scan on small windows.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"", "plain", "token: abc123", "xBearer abcdefghijklmnop",
		"ghp_" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----",
		"https://u:p@h/?token=1&a=2", "api_\u212aey=abc123", "eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl",
		"é" + awsKey, "Bearer\u00a0abcdef123456789"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, slow := scan(s, 0), scanBytes(s, 0)
		for p := range numPatterns {
			if got := slices.Sorted(slices.Values(fast.of(p))); !slices.Equal(got, slow.of(p)) {
				t.Fatalf("%s: scan %v, scanBytes %v", catalog[p].Name, got, slow.of(p))
			}
		}
		if len(s) > 400 {
			return // the reference is cubic
		}
		if got, want := String(s), reference(s); got != want {
			t.Fatalf("String(%q) = %q, reference %q", s, got, want)
		}
		if got, want := windowedSized(s, 64, 16), refWindowed(s, 64, 16); got != want {
			t.Fatalf("windowed(%q) = %q, reference %q", s, got, want)
		}
	})
}
