package canon

import "github.com/promptloom/promptloom/redact"

// SensitiveField is the field rule of Harn's default redaction policy,
// redact.FieldIsSensitive: the value of a member whose key it reports is
// replaced whole by Placeholder in Harn's redact_json, whatever the value's
// type. Keys themselves are never redacted.
func SensitiveField(key string) bool { return redact.FieldIsSensitive(key) }
