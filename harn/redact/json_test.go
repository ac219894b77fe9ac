package redact_test

import (
	"strings"
	"testing"

	"github.com/promptloom/promptloom/harn/redact"
	canon "github.com/promptloom/promptloom/internal/json"
)

// Harn's redact_json (crates/harn-vm/src/redact/mod.rs,
// redact_json_in_place): a member whose key is sensitive has its value, of
// any type, replaced by "[redacted]" without being scanned; other strings
// are redacted one by one; keys are kept.
func TestEncodeRedactedIsRedactJSON(t *testing.T) {
	in := `{"Authorization":{"scheme":"Bearer"},"x-api-key":42,"clientSecret":null,"note":"sk",
	  "nested":[{"refresh-token":["a"],"tokens":7,"token_encoding":"o200k"}],"MY_API_KEY":"v","apikeys":"kept"}`
	got, err := canon.EncodeRedacted([]byte(in), strings.ToUpper, redact.FieldIsSensitive)
	want := `{"Authorization":"[redacted]","MY_API_KEY":"[redacted]","apikeys":"KEPT","clientSecret":"[redacted]",` +
		`"nested":[{"refresh-token":"[redacted]","token_encoding":"O200K","tokens":7}],"note":"SK","x-api-key":"[redacted]"}`
	if err != nil || string(got) != want {
		t.Errorf("EncodeRedacted\n got %s, %v\nwant %s", got, err, want)
	}
}
