package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Bare URLs come out in the url crate's serialisation (WHATWG URL rules):
// expectations follow those rules and Harn's redact_url.
func TestBareURL(t *testing.T) {
	tests := []struct{ in, want string }{
		// Nothing to hide, already canonical: kept as it is.
		{"https://example.com/p?q=1#top", "https://example.com/p?q=1#top"},
		// Nothing to hide, not canonical: written back as the crate writes it.
		{"https://Example.COM", "https://example.com/"},
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:8443", "https://example.com:8443/"},
		{"https://h/a/./b/../c", "https://h/a/c"},
		{`https://h\a\b`, "https://h/a/b"},
		{"https://h/{x}`", "https://h/%7Bx%7D%60"},
		{"https://h/?q='\"", "https://h/?q=%27%22"},
		{"https://h/#a\"b", "https://h/#a%22b"},
		{"https://h/é", "https://h/%C3%A9"},
		{"http://0x7f.1/", "http://127.0.0.1/"},
		{"http://[::FFFF:127.0.0.1]/", "http://[::ffff:7f00:1]/"},
		{"http://[1:0:0:2:0:0:0:3]/", "http://[1:0:0:2::3]/"},
		{"http://@example.com", "http://example.com/"},
		// Userinfo goes; a query with pairs is then re-serialised.
		{"https://user:pw@h/p", "https://h/p"},
		{"https://user@h/p?q=a+b%20c", "https://h/p?q=a+b+c"},
		{"https://h/?flag&token=1", "https://h/?flag=&token=%5Bredacted%5D"},
		{"https://h/?a=1&&b=%7e", "https://h/?a=1&&b=%7e"},
		{"https://h/?a=1&&b=%7e&sig=x", "https://h/?a=1&b=%7E&sig=%5Bredacted%5D"},
		// compact_secret_name: case, '_' and '-' do not matter.
		{"https://h/?Client-Secret=x&X_Auth_Token=y&refreshToken=z&my_password=w",
			"https://h/?Client-Secret=%5Bredacted%5D&X_Auth_Token=%5Bredacted%5D&refreshToken=%5Bredacted%5D&my_password=%5Bredacted%5D"},
		// Not sensitive by Harn's rule.
		{"https://h/?key=x&X-Amz-Signature=y", "https://h/?key=x&X-Amz-Signature=y"},
		// Trailing white space is trimmed when the URL changes, kept when not.
		{"https://u:p@h/x \n", "https://h/x"},
		{"https://h/x \n", "https://h/x \n"},
		// Not a bare URL: white space inside, or another scheme.
		{"https://u:p@h/x y", "https://u:p@h/x y"},
		{"ftp://u:p@h/", "ftp://u:p@h/"},
		{"HTTPS://u:p@h/", "HTTPS://u:p@h/"},
		// The crate cannot parse these (Harn recurses without end); the
		// catalog alone applies.
		{"http://", "http://"},
		{"http://u:p@/x", "http://u:p@/x"},
		{"http://h:99999/", "http://h:99999/"},
		{"http://1.2.3.256/", "http://1.2.3.256/"},
		// The catalog runs over the rewritten URL.
		{"https://u:p@h/?q=" + awsKey, "https://h/?q=<redacted:aws_access_key:20>"},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

// The windowed scan, on windows small enough for the reference, agrees with
// Harn's algorithm run over the reference's matches.
func TestWindowedAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 600 {
		s := randomText(r) + randomText(r) + randomText(r)
		size := 40 + r.IntN(80)
		overlap := 8 + r.IntN(size/2)
		if got, want := windowedSized(s, size, overlap), refWindowed(s, size, overlap); got != want {
			t.Fatalf("case %d (%d/%d): windowed(%q)\n got %q\nwant %q", i, size, overlap, s, got, want)
		}
	}
	// Every window boundary is moved to a character boundary.
	s := strings.Repeat("é", 100) + awsKey + strings.Repeat("é", 100)
	if got, want := windowedSized(s, 33, 7), refWindowed(s, 33, 7); got != want {
		t.Fatalf("multi-byte windows: got %q want %q", got, want)
	}
}
