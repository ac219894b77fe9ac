package payload_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	door "github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/payload"
)

// Each provider's error shape, as its SDK reads it: the status, the
// message (any bytes, quoted), the provider's type for the status, and
// whether the SDK should retry.
func TestWriteError(t *testing.T) {
	msg := "promptloom refused the request: \"quoted\" <b> \x1b\n\u2028 caf\xc3"
	for _, tc := range []struct {
		p      payload.Provider
		status int
		path   []string // to the message
		kind   []string // to the type, and its value
		retry  string
	}{
		{payload.Anthropic, 400, []string{"error", "message"}, []string{"error", "type", "invalid_request_error"}, "false"},
		{payload.Anthropic, 413, []string{"error", "message"}, []string{"error", "type", "request_too_large"}, "false"},
		{payload.Anthropic, 502, []string{"error", "message"}, []string{"error", "type", "api_error"}, ""},
		{payload.OpenAIChat, 400, []string{"error", "message"}, []string{"error", "code", "promptloom_invalid_request_error"}, "false"},
		{payload.OpenAIResponses, 429, []string{"error", "message"}, []string{"error", "type", "rate_limit_error"}, "false"},
		{payload.Auto, 503, []string{"error", "message"}, []string{"error", "type", "api_error"}, ""},
		{payload.Gemini, 400, []string{"error", "message"}, []string{"error", "status", "INVALID_ARGUMENT"}, "false"},
		{payload.Gemini, 408, []string{"error", "message"}, []string{"error", "status", "DEADLINE_EXCEEDED"}, "false"},
		{payload.Gemini, 503, []string{"error", "message"}, []string{"error", "status", "UNAVAILABLE"}, ""},
	} {
		w := httptest.NewRecorder()
		door.WriteError(w, string(tc.p), tc.status, msg)
		var body map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s %d: %v: %s", tc.p, tc.status, err, w.Body)
		}
		at := func(path []string) any {
			var v any = body
			for _, k := range path {
				m, _ := v.(map[string]any)
				v = m[k]
			}
			return v
		}
		if w.Code != tc.status || at(tc.path) != "promptloom refused the request: \"quoted\" <b> \x1b\n\u2028 caf\uFFFD" ||
			at(tc.kind[:2]) != tc.kind[2] || w.Header().Get("X-Should-Retry") != tc.retry ||
			w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Content-Length") != itoa(w.Body.Len()) {
			t.Errorf("%s %d: %d %v %s", tc.p, tc.status, w.Code, w.Header(), w.Body)
		}
		if tc.p == payload.Anthropic && body["type"] != "error" || tc.p == payload.Gemini && at([]string{"error", "code"}) != float64(tc.status) {
			t.Errorf("%s %d: %s", tc.p, tc.status, w.Body)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
