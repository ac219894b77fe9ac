package redact

import (
	"slices"
	"testing"
)

// FuzzRedact holds the fast scanner to the catalog's own regexps, and
// redaction to its two promises: idempotent, and no catalog match left.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"", "plain", "token: abc123", "xBearer abcdefghijklmnop",
		"ghp_" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----",
		"https://u:p@h/?token=1&a=2", "api_\u212aey=abc123", "eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, slow := scan(s, 0), scanBytes(s, 0)
		for p := range numPatterns {
			if got := slices.Sorted(slices.Values(fast.of(p))); !slices.Equal(got, slow.of(p)) {
				t.Fatalf("%s: scan %v, scanBytes %v", catalog[p].name, got, slow.of(p))
			}
		}
		got := String(s)
		if want := reference(s); got != want {
			t.Fatalf("String(%q) = %q, reference %q", s, got, want)
		}
		if again := String(got); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
		for _, p := range Catalog() {
			if m := p.Regexp.FindString(got); m != "" {
				t.Fatalf("%s match %q survived in %q", p.Name, m, got)
			}
		}
	})
}
