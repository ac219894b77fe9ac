package redact

// pattern is one named entry of the secret catalog. Every match becomes
// <redacted:NAME:BYTE_LEN>.
type pattern struct {
	Name string
	// Source is Harn's pattern as written, in Rust regex syntax: its \b, \w
	// and \s are Unicode-aware and (?i) folds with Unicode simple case
	// folding. Go's regexp would read the same text with ASCII \b and \s,
	// so it is given as text, not compiled.
	Source string
}

// catalog is Harn's DEFAULT_SECRET_PATTERN_SPECS (crates/harn-vm/src/
// secret_patterns.rs): names, order and patterns. The order is part of every
// digest: each pattern runs over the output of the one before, and the name
// lands in the placeholder. The patterns are matched by hand (match.go).
var catalog = [numPatterns]pattern{
	{"jwt", `\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\b`},
	{"github_token", `\bgh[pousr]_[A-Za-z0-9]{36,255}\b`},
	{"github_pat_fine", `\bgithub_pat_[A-Za-z0-9_]{20,255}\b`},
	{"slack_token", `\bxox[abprs]-[A-Za-z0-9-]{10,255}\b`},
	{"aws_access_key", `\b(?:AKIA|ASIA|AGPA|AIDA|ANPA|AROA|AIPA)[A-Z0-9]{16}\b`},
	{"gitlab_token", `\bglpat-[A-Za-z0-9_-]{20,255}\b`},
	{"huggingface_token", `\bhf_[A-Za-z0-9]{20,255}\b`},
	{"cerebras_key", `\bcsk-[A-Za-z0-9]{20,255}\b`},
	{"together_key", `\btgp_v1_[A-Za-z0-9_-]{20,255}\b`},
	{"google_api_key", `\bAIza[A-Za-z0-9_-]{35}\b`},
	{"npm_token", `\bnpm_[A-Za-z0-9]{36}\b`},
	{"openai_key", `\bsk-[A-Za-z0-9_-]{20,255}\b`},
	{"stripe_key", `\b(?:rk|sk)_(?:live|test)_[0-9A-Za-z]{16,255}\b`},
	{"private_key_block", `(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----`},
	{"bearer_token", `(?i)\bBearer\s+[A-Za-z0-9._\-+/=]{12,}`},
	{"sensitive_assignment", `(?i)\b(?:api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|password|passwd|secret|token)\s*[:=]\s*(?:"[A-Za-z0-9._\-+/=]{6,}"|'[A-Za-z0-9._\-+/=]{6,}'|[A-Za-z0-9._\-+/=]*[0-9._\-+/=][A-Za-z0-9._\-+/=]*|secret|hidden|hideme|password|passwd|token)`},
}

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
