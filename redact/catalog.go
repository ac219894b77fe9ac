package redact

import "regexp"

// Pattern is one named entry of the secret catalog. Every match of Regexp is
// replaced by <redacted:Name:BYTE_LEN>.
type Pattern struct {
	Name   string
	Regexp *regexp.Regexp
}

// entry is a catalog row split so that the scanner can run the pattern
// anchored at a candidate position: flags, an optional leading \b (checked by
// hand, because an anchored run cannot see the byte before its start), and
// the rest of the expression.
type entry struct {
	name     string
	flags    string
	boundary bool
	body     string
	// unbounded: a match (or a failed attempt) can run to the end of the
	// text, so anchored runs at many candidates would be quadratic.
	unbounded bool

	full     *regexp.Regexp // the catalog's pattern, whole
	anchored *regexp.Regexp // ^flags body: the same pattern, matched only at the start
}

// catalog is Harn's secret catalog (docs/rules.md, "Redaction"), in its order. The order is part of
// every digest: each pattern runs over the output of the one before, and the
// name lands in the placeholder.
var catalog = compile([]entry{
	{name: "jwt", boundary: true, unbounded: true, body: `eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\b`},
	{name: "github_token", boundary: true, body: `gh[pousr]_[A-Za-z0-9]{36,255}\b`},
	{name: "github_pat_fine", boundary: true, body: `github_pat_[A-Za-z0-9_]{20,255}\b`},
	{name: "slack_token", boundary: true, body: `xox[abprs]-[A-Za-z0-9-]{10,255}\b`},
	{name: "aws_access_key", boundary: true, body: `(?:AKIA|ASIA|AGPA|AIDA|ANPA|AROA|AIPA)[A-Z0-9]{16}\b`},
	{name: "gitlab_token", boundary: true, body: `glpat-[A-Za-z0-9_-]{20,255}\b`},
	{name: "huggingface_token", boundary: true, body: `hf_[A-Za-z0-9]{20,255}\b`},
	{name: "cerebras_key", boundary: true, body: `csk-[A-Za-z0-9]{20,255}\b`},
	{name: "together_key", boundary: true, body: `tgp_v1_[A-Za-z0-9_-]{20,255}\b`},
	{name: "google_api_key", boundary: true, body: `AIza[A-Za-z0-9_-]{35}\b`},
	{name: "npm_token", boundary: true, body: `npm_[A-Za-z0-9]{36}\b`},
	{name: "openai_key", boundary: true, body: `sk-[A-Za-z0-9_-]{20,255}\b`},
	{name: "stripe_key", boundary: true, body: `(?:rk|sk)_(?:live|test)_[0-9A-Za-z]{16,255}\b`},
	{name: "private_key_block", flags: `(?s)`, unbounded: true, body: `-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----`},
	{name: "bearer_token", flags: `(?i)`, boundary: true, unbounded: true, body: `Bearer\s+[A-Za-z0-9._\-+/=]{12,}`},
	{name: "sensitive_assignment", flags: `(?i)`, boundary: true, unbounded: true, body: `(?:api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|password|passwd|secret|token)\s*[:=]\s*(?:"[A-Za-z0-9._\-+/=]{6,}"|'[A-Za-z0-9._\-+/=]{6,}'|[A-Za-z0-9._\-+/=]*[0-9._\-+/=][A-Za-z0-9._\-+/=]*|secret|hidden|hideme|password|passwd|token)`},
})

// Indexes into catalog. The scanner reports candidates per pattern.
const (
	pJWT = iota
	pGitHubToken
	pGitHubPAT
	pSlack
	pAWS
	pGitLab
	pHuggingFace
	pCerebras
	pTogether
	pGoogle
	pNPM
	pOpenAI
	pStripe
	pPrivateKey
	pBearer
	pSensitive
	numPatterns
)

func compile(es []entry) []entry {
	for i := range es {
		e := &es[i]
		lead := ""
		if e.boundary {
			lead = `\b`
		}
		e.full = regexp.MustCompile(e.flags + lead + e.body)
		e.anchored = regexp.MustCompile(`^` + e.flags + e.body)
	}
	return es
}

// Catalog returns the secret catalog in the order it is applied.
func Catalog() []Pattern {
	out := make([]Pattern, len(catalog))
	for i, e := range catalog {
		out[i] = Pattern{Name: e.name, Regexp: e.full}
	}
	return out
}
