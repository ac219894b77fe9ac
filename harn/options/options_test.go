package options

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"

	"github.com/google/go-cmp/cmp"
)

// Every kind of bad input, with the error kind and the words the one-line
// message must hold (the offending key or path, and the offset or limit
// where there is one). Each is input Harn refuses too; the line of Harn's
// system_prompt.rs (or validate.rs) that refuses it is named beside it.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in string
		kind     error
		names    []string
	}{
		// validate_system_fragment_keys: removed aliases name the canonical key.
		{"text for content", `{"system":[{"text":"x"}]}`, ErrInvalid, []string{"system[0]", "`text`", "use `content`"}},
		{"prompt for content", `{"system":[{"prompt":"x"}]}`, ErrInvalid, []string{"`prompt`", "use `content`"}},
		{"label for title", `{"system":[{"content":"x","label":"y"}]}`, ErrInvalid, []string{"`label`", "use `title`"}},
		{"name for title", `{"system":["a",{"content":"x","name":"y"}]}`, ErrInvalid, []string{"system[1]", "`name`", "use `title`"}},
		{"other unknown key", `{"system":[{"content":"x","colour":"red"}]}`, ErrInvalid, []string{"`colour`"}},
		// Keys are checked before enabled is: a disabled item is still checked.
		{"unknown key on a disabled item", `{"system":[{"content":"x","enabled":false,"prompt":"y"}]}`, ErrInvalid, []string{"`prompt`"}},
		// system_fragment_position.
		{"bad position", `{"system":[{"content":"x","position":"middle"}]}`, ErrInvalid, []string{"system[0].position", "middle"}},
		{"legacy position alias", `{"system":[{"content":"x","position":"append"}]}`, ErrInvalid, []string{"system[0].position", "append"}},
		{"non-string position", `{"system":[{"content":"x","position":1}]}`, ErrInvalid, []string{"system[0].position"}},
		// append_decomposed_primary_fragments: bucket trimmed and lowercased, then checked.
		{"bad bucket", `{"_system_fragments":[{"body":"x","bucket":"side"}]}`, ErrInvalid, []string{"_system_fragments[0].bucket", `"side"`}},
		{"null bucket shows as nil", `{"_system_fragments":[{"body":"x","bucket":null}]}`, ErrInvalid, []string{"_system_fragments[0].bucket", `"nil"`}},
		// replacement_system_prompt.
		{"replacement extra key", `{"system":{"mode":"replace","content":"x","title":"t"}}`, ErrInvalid, []string{"unknown replacement key `title`", "replacement root"}},
		{"replacement bad mode", `{"system":{"mode":"append","content":"x"}}`, ErrInvalid, []string{"system.mode"}},
		{"replacement mode not a string", `{"system":{"mode":1,"content":"x"}}`, ErrInvalid, []string{"system.mode"}},
		{"replacement without mode", `{"system":{"content":"x"}}`, ErrInvalid, []string{"mode"}},
		{"replacement without content", `{"system":{"mode":"replace"}}`, ErrInvalid, []string{"content"}},
		{"replacement content not a string", `{"system":{"mode":"replace","content":1}}`, ErrInvalid, []string{"system.content"}},
		// context_call_role.
		{"role conflict", `{"call_role":"a","mock_scope":"b"}`, ErrInvalid, []string{"mock_scope", "call_role"}},
		{"blank call_role", `{"call_role":"  "}`, ErrInvalid, []string{"call_role", "non-blank"}},
		{"blank mock_scope", `{"mock_scope":""}`, ErrInvalid, []string{"mock_scope"}},
		{"call_role not a string", `{"call_role":1}`, ErrInvalid, []string{"call_role"}},
		// append_system_fragment: content required, item a string or an object.
		{"missing content", `{"system":[{"title":"t"}]}`, ErrInvalid, []string{"system[0]", "content"}},
		{"system item of wrong type", `{"system":[null]}`, ErrInvalid, []string{"system[0]"}},
		// validate.rs: removed llm_call keys name their replacement.
		{"removed caps", `{"caps":["net"]}`, ErrInvalid, []string{"caps", "use `capabilities`"}},
		{"removed system_preamble", `{"system_preamble":"x"}`, ErrInvalid, []string{"system_preamble", "position: \"before\""}},
		{"removed provider key", `{"openai":{}}`, ErrInvalid, []string{"openai", "provider_options: {openai:"}},
		// Input no reader agrees on.
		{"malformed JSON", `{"system": [1,}`, ErrMalformed, []string{"malformed JSON", "offset 15"}},
		{"trailing data", `{} {}`, ErrMalformed, []string{"after the top-level value"}},
		{"not an object", `[1]`, ErrInvalid, []string{"JSON object"}},
		{"duplicate key", `{"system":[{"content":"x","content":"y"}]}`, ErrMalformed, []string{"system[0].content"}},
		{"duplicate tool key", `{"tools":[{"name":"safe","name":"shell"}]}`, ErrMalformed, []string{"tools[0].name"}},
		{"duplicate wrapper key", `{"tools":{"tools":[],"tools":[{"name":"x"}]}}`, ErrMalformed, []string{"tools.tools"}},
		{"duplicate profile key", `{"context_profile":{"caps":[],"caps":["x"]}}`, ErrMalformed, []string{"context_profile.caps"}},
		{"duplicate escaped key", `{"a":1,"\u0061":2}`, ErrMalformed, []string{"options: a: key given twice"}},
		{"duplicate top-level key", `{"system":"a","system":"b"}`, ErrMalformed, []string{"system"}},
		{"number out of range", `{"x":[1e999]}`, ErrMalformed, []string{"x[0]", "out of range"}},
		{"invalid UTF-8", "{\"system\":\"a\xffb\"}", ErrMalformed, []string{"invalid UTF-8 (offset 12)"}},
		// promptloom's own keys.
		{"bad register", `{"system":[{"content":"x","register":"law"}]}`, ErrInvalid, []string{"system[0].register", "law"}},
		{"fractional rank", `{"system":[{"content":"x","rank":1.5}]}`, ErrInvalid, []string{"system[0].rank"}},
		{"rank past 2^63-1", `{"system":[{"content":"x","rank":9223372036854775808}]}`, ErrInvalid, []string{"system[0].rank", "out of range"}},
		{"rank past -2^63", `{"system":[{"content":"x","rank":-9223372036854775809}]}`, ErrInvalid, []string{"system[0].rank", "out of range"}},
		{"bad part rank", `{"_system_fragments":[{"body":"x","rank":"high"}]}`, ErrInvalid, []string{"_system_fragments[0].rank"}},
		// The reminders extension (docs/options.md).
		{"reminders not a list", `{"reminders":{"body":"x"}}`, ErrInvalid, []string{"reminders", "must be a list"}},
		{"reminder not an object", `{"reminders":["x"]}`, ErrInvalid, []string{"reminders[0]"}},
		{"reminder without body", `{"reminders":[{"tags":["a"]}]}`, ErrInvalid, []string{"reminders[0]", "body"}},
		{"reminder unknown key", `{"reminders":[{"body":"x","colour":"red"}]}`, ErrInvalid, []string{"reminders[0]", "unknown key `colour`"}},
		{"reminder text for body", `{"reminders":[{"text":"x"}]}`, ErrInvalid, []string{"reminders[0]", "unknown key `text`; use `body`"}},
		{"reminder tags not strings", `{"reminders":[{"body":"x","tags":[1]}]}`, ErrInvalid, []string{"reminders[0].tags[0]"}},
		{"reminder preserve_on_compact not a bool", `{"reminders":[{"body":"x","preserve_on_compact":"yes"}]}`, ErrInvalid, []string{"reminders[0].preserve_on_compact"}},
		{"reminder ttl_turns out of range", `{"reminders":[{"body":"x","ttl_turns":9223372036854775808}]}`, ErrInvalid, []string{"reminders[0].ttl_turns", "ttl_turns is an integer"}},
		{"reminder ttl_turns negative", `{"reminders":[{"body":"x","ttl_turns":-1}]}`, ErrInvalid, []string{"reminders[0].ttl_turns", "negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in), nil)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("Parse(%s) = %v, want %v", tt.in, err, tt.kind)
			}
			var oe *Error
			if !errors.As(err, &oe) {
				t.Fatalf("error %T is not an *Error", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("message is not one line: %q", msg)
			}
			for _, n := range tt.names {
				if !strings.Contains(msg, n) {
					t.Errorf("message %q does not name %s", msg, n)
				}
			}
		})
	}
}

func TestParseSizeLimit(t *testing.T) {
	in := []byte(`{"system":"` + strings.Repeat("x", 100) + `"}`)
	_, err := Parse(in, &ParseOptions{MaxBytes: 50})
	if !errors.Is(err, promptloom.ErrTooLarge) || !strings.Contains(err.Error(), "limit of 50") {
		t.Errorf("Parse over the limit = %v", err)
	}
	if _, err := Parse(in, &ParseOptions{MaxBytes: len(in)}); err != nil {
		t.Errorf("Parse at the limit = %v", err)
	}
}

func TestParseDeepNesting(t *testing.T) {
	deep := `{"actor_chain":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`
	_, err := Parse([]byte(deep), nil)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Errorf("Parse of 100000 nested lists = %v, want a syntax error", err)
	}
}

func TestFragmentsFollowHarnRules(t *testing.T) {
	o, err := Parse([]byte(`{
		"system": "ignored: _system_fragments is present",
		"_system_fragments": [{"id": "primary:system", "body": "base", "producer": "agent"}, {"body": "late", "bucket": " AFTER ", "register": "craft", "rank": 2}],
		"context_profile": {"caps": ["vcs.git"], "prompt_fragments": [{"body": "not added: forwarded"}]},
		"tools": {"tools": [{"name": "todo", "guidance": " use it ", "active": false}, {"name": "shell"}, {"name": "read", "guidance": "  "}]},
		"capabilities": {"net": true, "off": false, "nil": null},
		"mock_scope": " agent.sub ",
		"model": "ignored too"
	}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []promptloom.Fragment{
		{ID: "primary:system", Source: "primary", Producer: "agent", Body: "base"},
		{ID: "primary[1]", Source: "primary", Bucket: promptloom.After, Body: "late", Register: budget.Craft, Rank: 2},
		{ID: "tool:todo.guidance", Source: "tool:todo", Body: "use it", RequiresTools: []string{"todo"}},
	}
	if diff := cmp.Diff(want, o.Fragments()); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
	// Harn has no inactive tool: "active" is not read (a lint warning says so).
	if diff := cmp.Diff([]string{"todo", "shell", "read"}, o.ActiveTools()); diff != "" {
		t.Errorf("active tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"net", "vcs.git"}, o.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if o.CallRole != "agent.sub" {
		t.Errorf("call role = %q, want the mock_scope alias, trimmed", o.CallRole)
	}
}

func TestReplacementSuppressesEveryOtherContributor(t *testing.T) {
	o, err := Parse([]byte(`{"system":{"mode":"replace","content":" x "},"tools":[{"name":"t","guidance":"g"}],
		"context_profile":{"prompt_fragments":[{"body":"p"}]},"_system_fragments":[{"body":"b"}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []promptloom.Fragment{promptloom.Replacement(" x ")}
	if diff := cmp.Diff(want, o.Fragments()); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
}

// context_call_role (system_prompt.rs): each key trimmed, null is unset,
// and the two must agree once trimmed.
func TestCallRole(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                                     "",
		`{"call_role":"a","mock_scope":"a"}`:     "a",
		`{"call_role":" a ","mock_scope":"a\t"}`: "a",
		`{"mock_scope":"s"}`:                     "s",
		`{"call_role":null,"mock_scope":null}`:   "",
	} {
		o, err := Parse([]byte(in), nil)
		if err != nil {
			t.Errorf("Parse(%s): %v", in, err)
		} else if o.CallRole != want {
			t.Errorf("Parse(%s).CallRole = %q, want %q", in, o.CallRole, want)
		}
	}
}

// TestInPlace: parsing in place reads the same options as parsing a copy,
// and the same error, on every document TestEachAgrees uses.
func TestInPlace(t *testing.T) {
	docs := append([]string{
		`{"system":[{"content":"a","title":"t","rank":3,"register":"craft"},"x"],"tools":[{"name":"t","guidance":"g"}],"call_role":"r"}`,
		`{"_system_fragments":[{"body":"b","bucket":"after"}],"context_profile":{"prompt_fragments":[{"body":" p "}]}}`,
		`{"system":[{"text":"x"}]}`, `{"system":"\u00e9\n"}`, `[`,
	}, wellFormedCases...)
	for _, doc := range docs {
		copied, errCopied := Parse([]byte(doc), nil)
		inPlace, errInPlace := Parse([]byte(doc), &ParseOptions{InPlace: true})
		if (errCopied == nil) != (errInPlace == nil) || errCopied != nil && errCopied.Error() != errInPlace.Error() {
			t.Fatalf("%q: errors differ: %v / %v", doc, errCopied, errInPlace)
		}
		if diff := cmp.Diff(copied, inPlace); diff != "" {
			t.Fatalf("%q: in place differs (-copied +in place):\n%s", doc, diff)
		}
	}
}

// TestLongListAllocation: a system list of a million bare zeros fails at
// its first item without first reserving room for a million items: Parse
// allocates within a small multiple of the input.
func TestLongListAllocation(t *testing.T) {
	data := []byte(`{"system":[0` + strings.Repeat(",0", 1<<20) + `]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Parse(data, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "system[0]") {
		t.Fatalf("got %v, want the type error of system[0]", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 3*uint64(len(data)) {
		t.Errorf("Parse allocated %d bytes for a %d-byte input", got, len(data))
	}
}
