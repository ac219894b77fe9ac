package redact

import (
	"strings"
	"unicode"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/redact/internal/url"
)

// redactURL is Harn's redact_url_in_string: a text that starts with
// http:// or https:// and holds no white space once its trailing white
// space is trimmed is a bare URL. Its redaction (Harn's redact_url) is
// returned, with true, when that differs from the trimmed text; otherwise
// the text is left alone, trailing white space and all.
//
// Harn's redact_url parses with the Rust url crate and writes the URL back
// from the parse, so a bare URL comes out in that crate's serialisation
// even when it held no secret ("https://Example.com" becomes
// "https://example.com/"). A URL the crate cannot parse sends Harn's
// redact_url back into redact_string, which calls it again without end;
// here such a text is left to the catalog alone. So is a URL whose host
// holds a non-ASCII character (after percent-decoding) or a label starting
// "xn--", which the crate passes through IDNA processing: that is not
// reproduced.
func redactURL(s string) (string, bool) {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return s, false
	}
	trimmed := strings.TrimRightFunc(s, unicode.IsSpace)
	if strings.ContainsFunc(trimmed, unicode.IsSpace) {
		return s, false
	}
	out, ok := redactParsedURL(trimmed)
	if !ok || out == trimmed {
		return s, false
	}
	return out, true
}

// redactedValue is Harn's REDACTED_PLACEHOLDER, the value a sensitive query
// parameter gets.
const redactedValue = pjson.Placeholder

// redactParsedURL is Harn's redact_url for a URL that parses: the userinfo
// goes, and when it went or a query parameter is sensitive, the query is
// rewritten from its parsed pairs (every value of a sensitive name becoming
// [redacted]) in application/x-www-form-urlencoded form.
func redactParsedURL(raw string) (string, bool) {
	u, ok := url.Parse(raw)
	if !ok {
		return "", false
	}
	changed := u.Userinfo
	if u.HasQuery {
		pairs := url.ParseForm(u.Query)
		for i := range pairs {
			if sensitiveParam(pairs[i][0]) {
				pairs[i][1] = redactedValue
				changed = true
			}
		}
		if changed && len(pairs) > 0 {
			u.Query = url.SerializeForm(pairs)
		}
	}
	return u.String(), true
}

// sensitiveParam is Harn's is_default_sensitive_url_param: the name is
// lowercased (ASCII only), '_' and '-' are dropped (compact_secret_name),
// and what is left is one of a few names or ends in token, secret or
// password. So clientSecret, api-key and X_Auth_Token are sensitive.
func sensitiveParam(name string) bool {
	compact := compactName(name)
	switch compact {
	case "apikey", "accesstoken", "refreshtoken", "idtoken", "clientsecret", "password",
		"secret", "token", "auth", "bearer", "sig", "signature":
		return true
	}
	return strings.HasSuffix(compact, "token") || strings.HasSuffix(compact, "secret") ||
		strings.HasSuffix(compact, "password")
}
