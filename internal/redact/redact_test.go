package redact

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestCatalogOrder(t *testing.T) {
	// secret_patterns.rs DEFAULT_SECRET_PATTERN_SPECS, in order.
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

// Expectations follow from Harn's patterns read with Rust's regex meaning;
// each is also checked against the reference.
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
		// (?i) folds the Kelvin sign into k and the long s into s.
		{"api_\u212aey=abc123", "<redacted:sensitive_assignment:16>"},
		{"x \u017fecret=abc123", "x <redacted:sensitive_assignment:14>"},
		// \b is Unicode: a letter before a token is a word character.
		{"é" + awsKey, "é" + awsKey},
		{"—" + awsKey, "—<redacted:aws_access_key:20>"},
		{awsKey + "é", awsKey + "é"},
		// \s is Unicode: a no-break space or \v separates Bearer from its token.
		{"Bearer\u00a0abcdef123456789", "<redacted:bearer_token:23>"},
		{"token\v=\vabc123", "<redacted:sensitive_assignment:14>"},
		// One pass: the assignment pattern runs before nothing, so a Bearer
		// left behind once "x" was redacted stays (Harn's output).
		{"token=abc.def" + "Bearer abcdefghijklmnop", "<redacted:sensitive_assignment:19> abcdefghijklmnop"},
		// A URL rewritten by the url crate's rules.
		{"https://user:pw@example.com/p?q=1&token=abc#f", "https://example.com/p?q=1&token=%5Bredacted%5D#f"},
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

// A placeholder can make a match for a pattern that already ran; Harn does
// not run the catalog again, so neither does String.
func TestOnePassLeavesLateMatches(t *testing.T) {
	// In the raw text no \b stands before AKIA ('n' is a word character),
	// so aws_access_key (pattern 4) finds nothing. sensitive_assignment
	// (pattern 15) then takes "token=hidden" (its value run is all letters,
	// so the literal word wins); the '>' of its placeholder puts a boundary
	// before AKIA, but aws_access_key has run already.
	in := "token=hiddenAKIAABCDEFGHIJKLMNOP"
	want := "<redacted:sensitive_assignment:12>AKIAABCDEFGHIJKLMNOP"
	if got := String(in); got != want {
		t.Fatalf("String(%q) = %q, want %q", in, got, want)
	}
	if got := reference(in); got != want {
		t.Fatalf("reference(%q) = %q, want %q", in, got, want)
	}
	if again := String(want); again == want {
		t.Fatal("redacting twice should find the key (redaction is not idempotent)")
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
	// Only the Kelvin sign and the long s fold into ASCII letters.
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < 0x80 && r != kelvin && r != longS {
				t.Fatalf("%U folds to ASCII %q", r, f)
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
	"\"", "'", ".", "_", "-", "x", "é", "\u212a", "\u017f", "\u00a0", "\v", "—", "https://u:p@h/?token=1&a=2",
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
	pad := func() string { return strings.Repeat("the plan is read step after step ", 1+r.IntN(3)) }
	return pad() + s + pad()
}

func TestStringAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 1500 {
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
				t.Fatalf("case %d, %s: scan %v, scanBytes %v in %q", i, catalog[p].Name, got, want, s)
			}
		}
	}
	if searched == 0 {
		t.Error("no case took the searching scan with candidates out of text order")
	}
}

func TestJoinedAgreesWithWholeRedaction(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 1500 {
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

// Inputs that would make a naive anchored scan quadratic (a BEGIN with no
// END read to the end of the text once per BEGIN, a run of eyJ- read once
// per eyJ, ...).
var pathological = map[string]string{
	"begin-no-end":   "-----BEGIN A PRIVATE KEY-----",
	"jwt-run":        "-eyJ",
	"jwt-dots":       "eyJa.",
	"jwt-long":       "eyJaaaa.bbbb.",
	"bearer-chain":   "Bearer aaaaaaaaaaaa",
	"token-chain":    "token=",
	"colons":         "api_key :",
	"quoted-letters": `token="`,
	"letters":        "token: abcdefghij",
	"sk-dashes":      "sk-",
	"end-lines":      "-----END A PRIVATE KEY-----",
}

// Each pathological input redacts as the reference does.
func TestPathologicalInputs(t *testing.T) {
	for name, unit := range pathological {
		short := strings.Repeat(unit, 8)
		if got, want := String(short), reference(short); got != want {
			t.Errorf("%s: String(%q) = %q, reference %q", name, short, got, want)
		}
	}
}

// BenchmarkPathological redacts each pathological input repeated to just
// under the windowing threshold; compare ns/op with BenchmarkRedactScan's
// MB/s (a quadratic scan takes minutes here, a linear one milliseconds):
// go test ./redact -run '^$' -bench Pathological -benchmem
func BenchmarkPathological(b *testing.B) {
	for name, unit := range pathological {
		s := strings.Repeat(unit, (maxScanInput-100)/len(unit))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				_ = String(s)
			}
		})
	}
}
