package redact

import (
	"strings"

	pjson "github.com/promptloom/promptloom/internal/json"
)

// fieldIsSensitive is Harn's field_is_sensitive for its default policy
// (is_default_sensitive_field in crates/harn-vm/src/redact/mod.rs): the name
// is lowercased (ASCII only), '_' and '-' are dropped, and what is left is
// one of authorization, proxyauthorization, cookie, setcookie, apikey,
// xamzsecuritytoken, xapikey, xauthtoken, xcsrftoken, xxsrftoken,
// accesstoken, refreshtoken, idtoken, bearertoken, clientsecret, password,
// secret, passwd, privatekey, sessiontoken, or ends in token, secret,
// password or apikey. So "Authorization", "X-Amz-Security-Token",
// "auth_token", "accessToken" and "clientSecret" are sensitive; "key" and
// "name" are not.
func fieldIsSensitive(name string) bool {
	compact := compactName(name)
	switch compact {
	case "authorization", "proxyauthorization", "cookie", "setcookie", "apikey",
		"xamzsecuritytoken", "xapikey", "xauthtoken", "xcsrftoken", "xxsrftoken",
		"accesstoken", "refreshtoken", "idtoken", "bearertoken", "clientsecret",
		"password", "secret", "passwd", "privatekey", "sessiontoken":
		return true
	}
	return strings.HasSuffix(compact, "token") || strings.HasSuffix(compact, "secret") ||
		strings.HasSuffix(compact, "password") || strings.HasSuffix(compact, "apikey")
}

// compactName is Harn's compact_secret_name over an ASCII-lowercased name.
func compactName(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c == '-' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// JSON is Harn's redact_json followed by its canonical encoding: the bytes
// stable_redacted_json_hash hashes, so a content hash of a manifest, a
// message list or a tool list is computed from it. In an object, a member
// whose key is credential-like (Harn's field_is_sensitive: Authorization,
// X-Api-Key, client_secret, anything ending in token, secret, password or
// apikey once lower-cased without '_' and '-'; "key" and "name" are not)
// has its value, whatever its type, replaced by the string "[redacted]"
// unread; every other string value is redacted as String redacts it; keys
// are kept. Numbers keep their exact digits, which is why this works from
// the bytes and not from a decoded value. The error is the JSON reader's,
// naming the path and offset of the first fault: raw must be JSON every
// reader reads alike (UTF-8, no key twice, no lone surrogate, numbers
// within range).
func JSON(raw []byte) ([]byte, error) {
	return pjson.EncodeRedacted(raw, String, fieldIsSensitive)
}
