package canon

import "strings"

// SensitiveField is the field rule of Harn's default redaction policy
// (redact/mod.rs, field_is_sensitive): a member whose key, lower-cased in
// ASCII and with '_' and '-' removed, is one of Harn's credential names
// (authorization, cookie, apikey, password, privatekey, ...) or ends with
// token, secret, password or apikey has its whole value replaced by
// Placeholder in Harn's redact_json, whatever the value's type. Keys
// themselves are never redacted.
func SensitiveField(key string) bool {
	c := compactName(key)
	switch c {
	case "authorization", "proxyauthorization", "cookie", "setcookie", "apikey",
		"xamzsecuritytoken", "xapikey", "xauthtoken", "xcsrftoken", "xxsrftoken",
		"accesstoken", "refreshtoken", "idtoken", "bearertoken", "clientsecret",
		"password", "secret", "passwd", "privatekey", "sessiontoken":
		return true
	}
	return strings.HasSuffix(c, "token") || strings.HasSuffix(c, "secret") ||
		strings.HasSuffix(c, "password") || strings.HasSuffix(c, "apikey")
}

// compactName lower-cases ASCII letters and drops '_' and '-', as Harn's
// compact_secret_name does after to_ascii_lowercase.
func compactName(key string) string {
	clean := true
	for i := 0; i < len(key); i++ {
		if c := key[i]; c == '_' || c == '-' || (c >= 'A' && c <= 'Z') {
			clean = false
			break
		}
	}
	if clean {
		return key
	}
	b := make([]byte, 0, len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '_' || c == '-':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}
