package payload

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/promptloom/promptloom/internal/wire"
)

// The parts of the wire only promptloom's own packages call, behind the
// door of internal/wire: what they know stays here.
func init() {
	wire.WriteError = func(w http.ResponseWriter, p string, status int, msg string) {
		writeError(w, Provider(p), status, msg)
	}
	wire.GenAI = func(p, host string) (string, string) { return genAI(Provider(p), host) }
	wire.MarkKey = func(p string) string { return markKey(Provider(p)) }
	wire.Join = func(p string, parameters, messages, tools, retained []byte) []byte {
		return joinBody(Provider(p), parameters, messages, tools, retained)
	}
	wire.AskDiagnostics = func(r any, previous string) ([]byte, string, string, bool) {
		return wireRequest(r).askDiagnostics(previous)
	}
	wire.PlaceBreakpoints = func(r any) ([]byte, []string) { return wireRequest(r).placeBreakpoints() }
	wire.SamplingOf = func(r any) wire.Sampling { return wireRequest(r).sampling() }
	wire.Body = func(r any) []byte { return wireRequest(r).bytes() }
	wire.Retained = func(r any) []byte { return wireRequest(r).retained() }
	wire.MissPlaces = missPlacesOf
}

// wireRequest is the *Request a hook of internal/wire was given. Those
// hooks take any, since internal/wire cannot name this package's type;
// only promptloom's own packages call them, each with a *Request, so any
// other value is a bug in the caller, and the panic names what it passed.
func wireRequest(r any) *Request {
	req, ok := r.(*Request)
	if !ok {
		panic(fmt.Sprintf("internal/wire: a hook given %T, not a *payload.Request", r))
	}
	return req
}

// bytes is the body r was read from (nil for a Request Read did not make).
func (r *Request) bytes() []byte {
	if r == nil {
		return nil
	}
	return r.body
}

// genAI is how OpenTelemetry's GenAI semantic conventions name a call of
// shape p sent to host: its gen_ai.provider.name and gen_ai.operation.name.
// Gemini's API served by Vertex AI (a host under aiplatform.googleapis.com,
// regional or not) is gcp.vertex_ai, elsewhere gcp.gemini; Anthropic's
// Messages is anthropic wherever it is served; both OpenAI APIs, and a
// shape not known, are openai. A span is named from them without the
// transport knowing any provider's hosts.
func genAI(p Provider, host string) (name, operation string) {
	switch p {
	case Anthropic:
		return "anthropic", "chat"
	case Gemini:
		if strings.Contains(host, "aiplatform") {
			return "gcp.vertex_ai", "generate_content"
		}
		return "gcp.gemini", "generate_content"
	}
	return "openai", "chat"
}
