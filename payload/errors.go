package payload

import (
	"net/http"
	"strconv"

	pjson "github.com/promptloom/promptloom/internal/json"
)

// writeError answers w with status in the provider's own error shape, so
// the provider's SDK raises its usual error with msg as its message:
// Anthropic's {"type":"error","error":{"type","message"}}, Gemini's
// {"error":{"code","message","status"}}, and OpenAI's (both APIs, and
// Auto) {"error":{"message","type","param","code"}}. The error's type is
// the one the provider documents for the status (Anthropic's
// invalid_request_error, request_too_large, api_error, …; Gemini's
// gRPC status). An answer below 500 also says it is not worth retrying
// (x-should-retry: false, which the Stainless SDKs, Anthropic's and
// OpenAI's, read before the status): the same request would fail again.
func writeError(w http.ResponseWriter, p Provider, status int, msg string) {
	kind := errorType(status)
	b := make([]byte, 0, len(msg)+128)
	switch p {
	case Anthropic:
		b = append(b, `{"type":"error","error":{"type":`...)
		b = pjson.AppendString(b, kind)
		b = append(b, `,"message":`...)
		b = pjson.AppendString(b, msg)
		b = append(b, "}}"...)
	case Gemini:
		b = append(b, `{"error":{"code":`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, `,"message":`...)
		b = pjson.AppendString(b, msg)
		b = append(b, `,"status":`...)
		b = pjson.AppendString(b, grpcStatus(status))
		b = append(b, "}}"...)
	default:
		b = append(b, `{"error":{"message":`...)
		b = pjson.AppendString(b, msg)
		b = append(b, `,"type":`...)
		b = pjson.AppendString(b, kind)
		b = append(b, `,"param":null,"code":`...)
		b = pjson.AppendString(b, "promptloom_"+kind)
		b = append(b, "}}"...)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if status < 500 {
		h.Set("X-Should-Retry", "false")
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// errorType is the error type Anthropic's API documents for a status,
// which OpenAI's error objects share where they overlap
// (invalid_request_error).
func errorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// grpcStatus is the gRPC status Google's APIs name for an HTTP status.
func grpcStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}
