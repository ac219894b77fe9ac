package redact

import "strings"

// Placeholder is what Harn puts in place of a whole value it redacts: the
// value of a JSON field with a sensitive name, or of a sensitive URL query
// parameter.
const Placeholder = redactedValue

// FieldIsSensitive is Harn's field_is_sensitive for its default policy
// (is_default_sensitive_field in crates/harn-vm/src/redact/mod.rs): the name
// is lowercased (ASCII only), '_' and '-' are dropped, and what is left is
// one of authorization, proxyauthorization, cookie, setcookie, apikey,
// xamzsecuritytoken, xapikey, xauthtoken, xcsrftoken, xxsrftoken,
// accesstoken, refreshtoken, idtoken, bearertoken, clientsecret, password,
// secret, passwd, privatekey, sessiontoken, or ends in token, secret,
// password or apikey. So "Authorization", "X-Amz-Security-Token",
// "auth_token", "accessToken" and "clientSecret" are sensitive; "key" and
// "name" are not.
func FieldIsSensitive(name string) bool {
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

// JSONValue is Harn's redact_json (RedactionPolicy::redact_json_in_place
// under the default policy) over a value as encoding/json decodes it into
// an any: in an object, a field whose name FieldIsSensitive has its value,
// whatever its type, replaced by the string "[redacted]" (Placeholder) and
// is not looked into; every other field's value is redacted in turn; every
// array element is; every string is replaced by String of it. Object keys
// are never redacted themselves; numbers, booleans and null are kept.
// JSONValue returns a new value and leaves v as it was.
//
// It is for a value already decoded. To hash JSON as Harn's
// stable_redacted_json_hash does, work from the bytes instead
// (journal.JSONHash, manifest's content hash): encoding/json has turned
// every number of a decoded value into a float64, so 1.0 and a 64-bit
// integer no longer encode as Harn writes them. Applying String to every
// string value is not enough either way: it misses the sensitive field
// names.
func JSONValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, child := range v {
			if FieldIsSensitive(k) {
				out[k] = Placeholder
			} else {
				out[k] = JSONValue(child)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, child := range v {
			out[i] = JSONValue(child)
		}
		return out
	case string:
		return String(v)
	}
	return v
}
