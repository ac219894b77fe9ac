package redact

import "testing"

// crates/harn-vm/src/redact/mod.rs: redact_json_strips_sensitive_field_names_recursively.
// A member whose key is sensitive has its value, of any type, replaced by
// "[redacted]" unread; other strings are redacted one by one; keys are
// kept; numbers keep their digits.
func TestHarnRedactJSONStripsSensitiveFieldNamesRecursively(t *testing.T) {
	got, err := JSON([]byte(`{
		"headers": {"authorization": "Bearer abc", "X-Amz-Security-Token": "session", "x-trace-id": "trace_1"},
		"list": [{"auth_token": "tok_secret", "accessToken": "camel", "name": "alice"}, {"name": "bob"}],
		"clientSecret": "camel-secret",
		"free_form": "Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789ABCD",
		"url": "https://api.example.com/v1?api_key=hideme",
		"n": 3, "private_key": {"nested": true}
	}`))
	want := `{"clientSecret":"[redacted]",` +
		// github_token runs before bearer_token, which then finds no token.
		`"free_form":"Bearer <redacted:github_token:44>",` +
		`"headers":{"X-Amz-Security-Token":"[redacted]","authorization":"[redacted]","x-trace-id":"trace_1"},` +
		`"list":[{"accessToken":"[redacted]","auth_token":"[redacted]","name":"alice"},{"name":"bob"}],` +
		`"n":3,"private_key":"[redacted]","url":"https://api.example.com/v1?api_key=%5Bredacted%5D"}`
	if err != nil || string(got) != want {
		t.Errorf("JSON\n got %s, %v\nwant %s", got, err, want)
	}
}

// Harn's redact_json (redact_json_in_place) on every type under a
// sensitive key, and keys that only look sensitive.
func TestJSONIsRedactJSON(t *testing.T) {
	in := `{"Authorization":{"scheme":"Bearer"},"x-api-key":42,"clientSecret":null,"note":"token: abc123",
	  "nested":[{"refresh-token":["a"],"tokens":7,"token_encoding":"o200k"}],"MY_API_KEY":"v","apikeys":"kept"}`
	got, err := JSON([]byte(in))
	want := `{"Authorization":"[redacted]","MY_API_KEY":"[redacted]","apikeys":"kept","clientSecret":"[redacted]",` +
		`"nested":[{"refresh-token":"[redacted]","token_encoding":"o200k","tokens":7}],` +
		`"note":"<redacted:sensitive_assignment:13>","x-api-key":"[redacted]"}`
	if err != nil || string(got) != want {
		t.Errorf("JSON\n got %s, %v\nwant %s", got, err, want)
	}
	if _, err := JSON([]byte(`{"a":1,"a":2}`)); err == nil {
		t.Error("JSON accepted a key given twice")
	}
}

func TestFieldIsSensitive(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "set-cookie": true, "X-Amz-Security-Token": true, "auth_token": true,
		"accessToken": true, "clientSecret": true, "my_api_key": true, "PASSWD": true, "private-key": true,
		"key": false, "name": false, "tokens": false, "secretary": false, "x-trace-id": false,
	} {
		if got := fieldIsSensitive(name); got != want {
			t.Errorf("fieldIsSensitive(%q) = %v, want %v", name, got, want)
		}
	}
}
