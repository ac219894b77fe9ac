package payload

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/manifest"
)

// A Request built as a struct literal (or a nil one) has fields but no
// body read: every method says so with an *Error rather than panicking
// or answering as if the body had no system channel.
func TestRequestNotMadeByRead(t *testing.T) {
	for name, r := range map[string]*Request{
		"literal": {Provider: Anthropic, Model: "m", Messages: []byte(`[]`)},
		"zero":    {},
		"nil":     nil,
	} {
		check := func(method string, err error) {
			t.Helper()
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrMalformed) {
				t.Errorf("%s: %s: %v, want an *Error of kind ErrMalformed", name, method, err)
				return
			}
			if msg := err.Error(); !strings.Contains(msg, "not made by payload.Read") || strings.Contains(msg, "at byte") {
				t.Errorf("%s: %s: %q does not say the Request was not read", name, method, msg)
			}
		}
		c, err := r.System()
		if c != nil {
			t.Errorf("%s: System gave a channel", name)
		}
		check("System", err)
		_, err = r.Parts()
		check("Parts", err)
		_, err = r.Cache()
		check("Cache", err)
		_, err = r.Verify(&manifest.Manifest{})
		check("Verify", err)
		// The hooks promptloom's own packages call answer too.
		if body, at := wire.PlaceBreakpoints(r); body != nil || at != nil {
			t.Errorf("%s: PlaceBreakpoints = %q, %v", name, body, at)
		}
		if _, _, _, added := wire.AskDiagnostics(r, "x"); added {
			t.Errorf("%s: AskDiagnostics added to a body it has not", name)
		}
		if s := wire.SamplingOf(r); !reflect.DeepEqual(s, wire.Sampling{}) {
			t.Errorf("%s: SamplingOf = %+v", name, s)
		}
		if wire.Body(r) != nil || wire.Retained(r) != nil {
			t.Errorf("%s: Body or Retained is not nil", name)
		}
	}
}

// wireHooks are internal/wire's hooks as this package sets them, by name.
func wireHooks() map[string]any {
	return map[string]any{
		"WriteError": wire.WriteError, "GenAI": wire.GenAI,
		"MarkKey": wire.MarkKey, "Join": wire.Join, "AskDiagnostics": wire.AskDiagnostics,
		"PlaceBreakpoints": wire.PlaceBreakpoints, "SamplingOf": wire.SamplingOf,
		"Body": wire.Body, "Retained": wire.Retained, "MissPlaces": wire.MissPlaces,
	}
}

// Once payload is imported every hook of internal/wire is set: the list
// above is held to the variables wire.go declares, so a hook added there
// and not set here fails.
func TestEveryWireHookIsSet(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../internal/wire/wire.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				declared = append(declared, n.Name)
			}
		}
	}
	hooks := wireHooks()
	var listed []string
	for name, fn := range hooks {
		listed = append(listed, name)
		if reflect.ValueOf(fn).IsNil() {
			t.Errorf("wire.%s is not set", name)
		}
	}
	slices.Sort(declared)
	slices.Sort(listed)
	if !slices.Equal(declared, listed) {
		t.Errorf("internal/wire declares %v; the test checks %v", declared, listed)
	}
}

// A hook given something other than a *Request is a bug in its caller:
// the panic names the type it got.
func TestWireHookNamesWhatItGot(t *testing.T) {
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "[]uint8") || !strings.Contains(msg, "*payload.Request") {
			t.Errorf("panic %q does not name the type given and the one wanted", msg)
		}
	}()
	wire.Body([]byte("{}"))
}

// Route reads the shape of a model endpoint's bodies from its path, and
// Gemini's model and streaming, which its bodies do not say.
func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		path       string
		p          Provider
		model      string
		stream, ok bool
	}{
		{"/v1/messages", Anthropic, "", false, true},
		{"/v1/chat/completions/", OpenAIChat, "", false, true},
		{"/v1/responses", OpenAIResponses, "", false, true},
		{"/v1beta/models/gemini-3-pro:generateContent", Gemini, "gemini-3-pro", false, true},
		{"/v1/projects/p/locations/l/publishers/google/models/gemini-3-flash:streamGenerateContent", Gemini, "gemini-3-flash", true, true},
		{"/v1/models", Auto, "", false, false},
		{"/v1/threads/t/messages", Auto, "", false, false},
		{"/v1/models/claude:streamRawPredict", Auto, "", true, false},
	} {
		p, model, stream, ok := Route(tc.path)
		if p != tc.p || model != tc.model || stream != tc.stream || ok != tc.ok {
			t.Errorf("Route(%q) = %q, %q, %v, %v; want %q, %q, %v, %v", tc.path, p, model, stream, ok, tc.p, tc.model, tc.stream, tc.ok)
		}
	}
}
