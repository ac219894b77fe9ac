package proxy

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/promptloom/promptloom/payload"
)

// writeError answers in the provider's own error shape, so the SDK raises
// its usual error: Anthropic's {"type":"error","error":{...}}, OpenAI's
// {"error":{...}}, Gemini's {"error":{"code","message","status"}}. A
// refusal is not worth retrying, and says so (x-should-retry: false,
// which the Stainless SDKs read).
func writeError(w http.ResponseWriter, shape payload.Provider, status int, kind, msg string) {
	var body any
	switch shape {
	case payload.Anthropic:
		body = map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}}
	case payload.Gemini:
		body = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": grpcStatus(status)}}
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": kind, "param": nil, "code": "promptloom_" + kind}}
	}
	b, _ := json.Marshal(body)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if status < 500 {
		h.Set("X-Should-Retry", "false")
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func grpcStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusRequestEntityTooLarge:
		return "INVALID_ARGUMENT"
	case http.StatusRequestTimeout:
		return "DEADLINE_EXCEEDED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}
