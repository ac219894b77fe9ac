package manifest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
)

// FuzzMetadataRedacted holds the redaction of a manifest's metadata to
// Harn's rule for arbitrary ids, producers, sources, tool names, call roles
// and actor chains: every string New writes is redact.String of what it was
// given, the canonical bytes read back to the same content hash, and a
// string redaction changed is not a value in the canonical bytes.
func FuzzMetadataRedacted(f *testing.F) {
	tok := "ghp_" + strings.Repeat("Ab3x", 9)
	f.Add("system[0]", "caller", "src", "todo", "agent.main", `["planner"]`)
	f.Add("id "+tok, "p "+tok, "password=hunter22", "tool-"+tok, "role "+tok, `[{"api_key":"x","who":"`+tok+`"}]`)
	f.Add("https://u:pw@Example.com/?token=abc", "Bearer abcdefghijklmnop", "", "sk-"+strings.Repeat("a", 24), "  ", `{"n":9007199254740993,"f":1.0}`)
	f.Fuzz(func(t *testing.T, id, producer, source, tool, callRole, chain string) {
		if id == "" {
			return // the reducer refuses an empty id
		}
		fr := promptloom.Fragment{ID: id, Source: id, Producer: producer, Bucket: promptloom.Before, Body: "body", Sources: []string{source}}
		guidance := promptloom.ToolGuidance(tool, "use it")
		r, err := promptloom.Reduce([]promptloom.Fragment{fr, guidance}, &promptloom.Options{Tools: []string{tool}})
		if err != nil {
			return
		}
		m := New(r, callRole)
		want := map[string]string{"id": redact.String(id), "source": redact.String(source), "tool": redact.String(guidance.ID)}
		if producer != "" {
			want["producer"] = redact.String(producer)
		}
		got := map[string]string{"id": m.Segments[0].ID, "source": m.Segments[0].Sources[0], "tool": m.Segments[1].ID}
		if producer != "" {
			got["producer"] = m.Segments[0].Producer
		}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("%s: manifest has %q, want redact.String = %q", k, got[k], want[k])
			}
		}
		if strings.TrimSpace(callRole) != "" && m.CallRole != redact.String(callRole) {
			t.Fatalf("call_role %q, want %q", m.CallRole, redact.String(callRole))
		}
		if json.Valid([]byte(chain)) {
			if err := m.SetActorChain(json.RawMessage(chain)); err != nil {
				return // a chain with no canonical form (a repeated key, depth)
			}
		}
		c, err := m.Canonical()
		if err != nil {
			t.Fatalf("Canonical: %v", err)
		}
		h, _ := m.ContentHash()
		back, err := Read(c)
		if err != nil {
			t.Fatalf("canonical bytes do not read back: %v\n%s", err, c)
		}
		if h2, _ := back.ContentHash(); h2 != h {
			t.Fatalf("content hash %s changed to %s after a round trip", h, h2)
		}
		// Each string redaction changed is not a value of the canonical
		// manifest. (It may still stand inside another value that
		// redaction leaves alone: "tool:0ghp_…" has no word boundary
		// before the token.)
		for _, s := range []string{id, producer, source, callRole} {
			if redact.String(s) != s && strings.Contains(string(c), string(pjson.AppendString(nil, s))) {
				t.Fatalf("%q, changed by redaction, is a value in the canonical manifest", s)
			}
		}
	})
}
