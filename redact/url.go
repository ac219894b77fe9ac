package redact

import (
	"net/url"
	"strings"
	"unicode"
)

// redactURL applies the URL rule: a text that is one bare URL (it starts with
// http:// or https:// and holds no white space) loses its userinfo, and the
// values of its sensitive query parameters become [redacted]. Everything else
// is kept byte for byte, so a URL with nothing to hide hashes as written.
func redactURL(s string) (string, bool) {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return s, false
	}
	if strings.ContainsFunc(s, unicode.IsSpace) {
		return s, false
	}
	scheme := strings.Index(s, "://") + len("://")
	rest := s[scheme:]

	// The authority runs to the first '/', '?' or '#'; userinfo is what
	// stands before its last '@'.
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	changed := false
	if at := strings.LastIndexByte(rest[:authEnd], '@'); at >= 0 {
		rest = rest[at+1:]
		changed = true
	}

	q := strings.IndexByte(rest, '?')
	if q < 0 {
		if !changed {
			return s, false
		}
		return s[:scheme] + rest, true
	}
	query := rest[q+1:]
	fragment := ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, fragment = query[:h], query[h:]
	}
	pairs := strings.Split(query, "&")
	for i, pair := range pairs {
		key, _, hasValue := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(key)
		if err != nil {
			name = key
		}
		if sensitiveParam(strings.ToLower(name)) && (!hasValue || pair[len(key)+1:] != "[redacted]") {
			pairs[i] = key + "=[redacted]"
			changed = true
		}
	}
	if !changed {
		return s, false
	}
	return s[:scheme] + rest[:q+1] + strings.Join(pairs, "&") + fragment, true
}

// sensitiveParam is Harn's list of query parameters whose values are secret.
func sensitiveParam(name string) bool {
	switch name {
	case "api_key", "apikey", "access_token", "refresh_token", "id_token",
		"client_secret", "password", "secret", "token", "auth", "bearer",
		"sig", "signature":
		return true
	}
	return strings.HasSuffix(name, "_token") || strings.HasSuffix(name, "_secret") ||
		strings.HasSuffix(name, "_password")
}
