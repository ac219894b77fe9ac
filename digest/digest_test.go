package digest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	luke "lukechampine.com/blake3"
)

// independent hashes with a second BLAKE3 implementation, so a bug shared by
// this package and zeebo/blake3 cannot hide.
func independent(s string) string {
	sum := luke.Sum256([]byte(s))
	const hexd = "0123456789abcdef"
	var b strings.Builder
	b.WriteString("blake3:")
	for _, c := range sum {
		b.WriteByte(hexd[c>>4])
		b.WriteByte(hexd[c&15])
	}
	return b.String()
}

func TestOfMatchesIndependentBLAKE3(t *testing.T) {
	for _, s := range []string{"", "base", "naïve 日本語", strings.Repeat("x", 5000),
		strings.Repeat("y", 1024), strings.Repeat("z", 1025), strings.Repeat("w", 8193), strings.Repeat("v", 1<<20+7)} {
		if got, want := Of(s).String(), independent(s); got != want {
			t.Errorf("Of(%q) = %s, want %s", s, got, want)
		}
	}
	// The conformance vectors give this as the digest of an absent prompt.
	if got := String("").String(); got != "blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262" {
		t.Errorf("String(\"\") = %s", got)
	}
}

func TestOfRedactsFirst(t *testing.T) {
	secret := "push with ghp_" + strings.Repeat("a", 36)
	if got, want := Of(secret).String(), independent("push with <redacted:github_token:40>"); got != want {
		t.Errorf("Of(secret) = %s, want the digest of the redacted text %s", got, want)
	}
}

func TestParse(t *testing.T) {
	d := Of("base")
	back, err := Parse(d.String())
	if err != nil || back != d {
		t.Fatalf("Parse(%s) = %v, %v", d, back, err)
	}
	for _, bad := range []string{"", "blake3:", "sha256:" + strings.Repeat("0", 64),
		"blake3:" + strings.Repeat("A", 64), "blake3:" + strings.Repeat("g", 64),
		"blake3:" + strings.Repeat("0", 63) + "F", "blake3:" + strings.Repeat("0", 65),
		"blake3:" + strings.Repeat("0", 62) + "/0", "blake3:" + strings.Repeat("0", 62) + ":0"} {
		if _, err := Parse(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) error = %v, want ErrMalformed", bad, err)
		}
	}
	// Every byte, in a high and a low digit: a lowercase hex digit is read
	// as encoding/hex reads it, anything else is refused.
	for c := range 256 {
		for _, at := range []int{0, 63} {
			text := []byte(strings.Repeat("0", 64))
			text[at] = byte(c)
			got, err := Parse("blake3:" + string(text))
			want, herr := hex.DecodeString(string(text))
			lower := '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
			switch {
			case lower && (err != nil || herr != nil || !bytes.Equal(got[:], want)):
				t.Errorf("byte %q at %d: Parse = %x, %v; encoding/hex = %x", byte(c), at, got, err, want)
			case !lower && !errors.Is(err, ErrMalformed):
				t.Errorf("byte %q at %d: Parse error = %v, want ErrMalformed", byte(c), at, err)
			}
		}
	}
}
