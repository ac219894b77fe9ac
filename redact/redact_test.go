package redact

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// reference is the catalog applied the slow, obvious way: every regexp over
// the whole text, in order. String must always agree with it.
// It repeats the pass until nothing changes, as Piece documents.
func reference(s string) string {
	for {
		prev := s
		if u, ok := redactURL(s); ok {
			s = u
		}
		for _, p := range Catalog() {
			s = p.Regexp.ReplaceAllStringFunc(s, func(m string) string {
				return fmt.Sprintf("<redacted:%s:%d>", p.Name, len(m))
			})
		}
		if s == prev {
			return s
		}
	}
}

func TestCatalogOrder(t *testing.T) {
	want := []string{"jwt", "github_token", "github_pat_fine", "slack_token", "aws_access_key",
		"gitlab_token", "huggingface_token", "cerebras_key", "together_key", "google_api_key",
		"npm_token", "openai_key", "stripe_key", "private_key_block", "bearer_token",
		"sensitive_assignment"}
	got := Catalog()
	if len(got) != len(want) {
		t.Fatalf("catalog has %d patterns, want %d", len(got), len(want))
	}
	for i, p := range got {
		if p.Name != want[i] {
			t.Errorf("catalog[%d] = %s, want %s", i, p.Name, want[i])
		}
	}
}

var (
	ghToken = "ghp_" + strings.Repeat("A1b2", 9)
	awsKey  = "AKIA" + "IOSFODNN7EXAMPLE"
	jwt     = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
	pemKey  = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain prose, nothing to hide", "plain prose, nothing to hide"},
		{"use " + ghToken + " to push", "use <redacted:github_token:40> to push"},
		{"key " + awsKey + ".", "key <redacted:aws_access_key:20>."},
		{"jwt=" + jwt, "jwt=<redacted:jwt:49>"},
		{"a\n" + pemKey + "\nb", "a\n<redacted:private_key_block:68>\nb"},
		{"Authorization: Bearer abcdef123456789", "Authorization: <redacted:bearer_token:22>"},
		{"password: hunter22", "<redacted:sensitive_assignment:18>"},
		{"API_KEY = 'abcdefgh'", "<redacted:sensitive_assignment:20>"},
		{"the token: is nothing", "the token: is nothing"},
		{"sk-ant-" + strings.Repeat("x", 30), "<redacted:openai_key:37>"},
		{"xsk-" + strings.Repeat("x", 30), "xsk-" + strings.Repeat("x", 30)},
		// (?i) folds the Kelvin sign into k and the long s into s, as RE2 does.
		{"api_\u212aey=abc123", "<redacted:sensitive_assignment:16>"},
		{"x\u017fecret=abc123", "x<redacted:sensitive_assignment:14>"},
		{"https://user:pw@example.com/p?q=1&token=abc#f", "https://example.com/p?q=1&token=[redacted]#f"},
		{"https://example.com/p?q=1", "https://example.com/p?q=1"},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
		if ref := reference(tt.in); ref != tt.want {
			t.Errorf("reference(%q) = %q; the test's expectation is wrong", tt.in, ref)
		}
	}
}

func TestStringDoesNotAllocateOnCleanText(t *testing.T) {
	s := strings.Repeat("The tool_name field - see A: b = c. ", 50)
	if n := testing.AllocsPerRun(10, func() { _ = String(s) }); n != 0 {
		t.Errorf("String allocated %v times on clean text", n)
	}
}

// The scanner relies on the last letters of the keywords and the letters of
// Bearer having only ASCII case folds; the Kelvin sign and the long s fold
// into k and s, which only stand inside keywords.
func TestFoldAssumptions(t *testing.T) {
	for _, r := range "bearydnt" {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= 0x80 {
				t.Errorf("%q folds to non-ASCII %q", r, f)
			}
		}
	}
}

// pieces that make random texts dense in near-misses and real secrets.
var pieces = []string{
	"ghp_", "gho_", "github_pat_", "xoxb-", "AKIA", "AIza", "glpat-", "hf_", "csk-",
	"tgp_v1_", "npm_", "sk-", "sk_live_", "rk_test_", "eyJ", "-----BEGIN ", "PRIVATE KEY-----",
	"-----END ", "Bearer ", "bearer\t", "token", "Token", "password", "passwd", "secret",
	"api_key", "api-key", "client_secret", "id_token", "access-token", ":", "=", " ", "\n",
	"\"", "'", ".", "_", "-", "x", "é", "\u212a", "\u017f", "https://u:p@h/?token=1&a=2",
	"ABCDEFGHIJ", "0123456789", "abcdefghij", "hidden", "RSA ",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(40); n > 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// sparse wraps s in prose, so that its anchors are few enough for scan to
// search for them rather than fall back to scanBytes.
func sparse(r *rand.Rand, s string) string {
	pad := func() string { return strings.Repeat("the plan is read step after step ", 1+r.IntN(20)) }
	return pad() + s + pad()
}

func TestStringAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 4000 {
		s := randomText(r)
		if i%2 == 1 {
			s = sparse(r, s)
		}
		if got, want := String(s), reference(s); got != want {
			t.Fatalf("case %d: String(%q)\n got %q\nwant %q", i, s, got, want)
		}
	}
}

// The two scans must find the same candidates (scan in anchor order,
// scanBytes in text order).
func TestScansAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	searched := 0
	for i := range 4000 {
		s := randomText(r)
		if i%2 == 1 {
			s = sparse(r, s)
		}
		fast, slow := scan(s, 0), scanBytes(s, 0)
		if len(fast.of(pBearer)) > 0 && !slices.Equal(fast.of(pBearer), slow.of(pBearer)) {
			searched++ // 'b' and 'B' were searched for apart
		}
		for p := range numPatterns {
			got := slices.Sorted(slices.Values(fast.of(p)))
			if want := slow.of(p); !slices.Equal(got, want) {
				t.Fatalf("case %d, %s: scan %v, scanBytes %v in %q", i, catalog[p].name, got, want, s)
			}
		}
	}
	if searched == 0 {
		t.Error("no case took the searching scan with candidates out of text order")
	}
}

func TestJoinedAgreesWithWholeRedaction(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 3000 {
		raw := make([]string, 1+r.IntN(4))
		ps := make([]Text, len(raw))
		for j := range raw {
			raw[j] = strings.TrimSpace(randomText(r))
			ps[j] = Piece(raw[j])
		}
		whole := strings.Join(raw, "\n\n")
		if got, want := Joined(ps, "\n\n", whole), reference(whole); got != want {
			t.Fatalf("case %d: pieces %q\n got %q\nwant %q", i, raw, got, want)
		}
	}
}

func TestIdempotent(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 4000 {
		once := String(randomText(r))
		if twice := String(once); twice != once {
			t.Fatalf("redacting twice changed %q to %q", once, twice)
		}
		for _, p := range Catalog() {
			if m := p.Regexp.FindString(once); m != "" {
				t.Fatalf("%s match %q survived in %q", p.Name, m, once)
			}
		}
	}
}

// Inputs that made the anchored scan quadratic before unbounded patterns
// with several candidates fell back to one linear pass (a BEGIN with no
// END read to the end of the text once per BEGIN). They must redact as the
// catalog does; a quadratic scan would make this test run for minutes.
func TestPathologicalInputs(t *testing.T) {
	for name, s := range map[string]string{
		"begin-no-end": strings.Repeat("-----BEGIN A PRIVATE KEY-----", 3000),
		"jwt-run":      strings.Repeat("-eyJ", 20000),
		"bearer-chain": strings.Repeat("Bearer aaaaaaaaaaaa", 5000),
		"token-chain":  strings.Repeat("token=", 10000),
		"colons":       strings.Repeat("api_key :", 10000),
	} {
		if got, want := String(s), reference(s); got != want {
			t.Errorf("%s: String differs from the catalog's regexps", name)
		}
	}
}
