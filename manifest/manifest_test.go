package manifest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
)

func build(t *testing.T, frags ...promptloom.Fragment) (*Manifest, string) {
	t.Helper()
	r, err := promptloom.Reduce(frags, &promptloom.Options{Tools: []string{"todo"}})
	if err != nil {
		t.Fatal(err)
	}
	m := New(r, "agent.main")
	if err := Validate(m, r.System); err != nil {
		t.Fatalf("fresh manifest does not validate: %v", err)
	}
	return m, r.System
}

func frag(id string, bucket promptloom.Bucket, body string) promptloom.Fragment {
	return promptloom.Fragment{ID: id, Source: id, Bucket: bucket, Body: body}
}

// sample has an included, an excluded (gated) and an after fragment.
func sample(t *testing.T) (*Manifest, string) {
	gated := frag("gated", promptloom.Before, "needs shell")
	gated.RequiresTools = []string{"shell"}
	return build(t,
		frag("first", promptloom.Before, "alpha"),
		gated,
		frag("second", promptloom.After, "omega"),
		promptloom.ToolGuidance("todo", "keep the list current"),
	)
}

func TestNewFields(t *testing.T) {
	m, system := sample(t)
	if system != "alpha\n\nkeep the list current\n\nomega" {
		t.Fatalf("system = %q", system)
	}
	if m.Schema != schema || m.Scope != "system_prompt" || m.Boundary != boundaryPreEgress ||
		m.Messages != "served_context_digest_only" || m.Root != "composed" ||
		m.JoinSeparator != "\n\n" || m.JoinSeparatorBytes != 2 || m.JoinSeparatorCount != 2 ||
		m.SystemPromptBytes != len(system) || string(m.ActorChain) != "null" {
		t.Errorf("constant fields wrong: %+v", m)
	}
	if m.WholePromptDigest != digest.Of(system) {
		t.Errorf("whole_prompt_digest = %s", m.WholePromptDigest)
	}
}

// Every validation rule of docs/rules.md, broken once, gives its own error type.
func TestValidateRules(t *testing.T) {
	tests := []struct {
		name string
		edit func(m *Manifest, system *string)
		rule Rule
	}{
		{"empty call role", func(m *Manifest, _ *string) { m.CallRole = " " }, Rule("call_role")},
		// Harn checks the whole prompt's digest before any segment's.
		{"served byte changed", func(_ *Manifest, s *string) { *s = "alphA" + (*s)[5:] }, Rule("whole_prompt_digest")},
		{"served separator changed", func(_ *Manifest, s *string) { *s = "alpha\n " + (*s)[7:] }, Rule("whole_prompt_digest")},
		{"separator changed", func(m *Manifest, s *string) {
			*s = "alpha\n " + (*s)[7:]
			m.WholePromptDigest = digest.Of(*s)
		}, Rule("join_separator")},
		{"served byte changed, whole digest too", func(m *Manifest, s *string) {
			*s = "alphA" + (*s)[5:]
			m.WholePromptDigest = digest.Of(*s)
		}, Rule("segment_digest")},
		{"byte removed", func(_ *Manifest, s *string) { *s = (*s)[1:] }, Rule("system_prompt_bytes")},
		{"digest edited", func(m *Manifest, _ *string) { m.Segments[0].Digest = digest.Of("wrong") }, Rule("segment_digest")},
		{"segment bytes edited", func(m *Manifest, _ *string) { m.Segments[0].Bytes++ }, Rule("byte_count")},
		{"system bytes edited", func(m *Manifest, _ *string) { m.SystemPromptBytes++ }, Rule("system_prompt_bytes")},
		{"whole digest edited", func(m *Manifest, _ *string) { m.WholePromptDigest = digest.Of("x") }, Rule("whole_prompt_digest")},
		{"duplicate included row", func(m *Manifest, _ *string) {
			m.Segments = append(m.Segments, m.Segments[0])
		}, Rule("duplicate_segment")},
		{"replacement root with an extra row", func(m *Manifest, _ *string) { m.Root = "replacement" }, Rule("replacement_root")},
		{"unknown scope", func(m *Manifest, _ *string) { m.Scope = "messages" }, Rule("scope")},
		{"unknown messages", func(m *Manifest, _ *string) { m.Messages = "full" }, Rule("messages")},
		{"wrong join_separator_bytes", func(m *Manifest, _ *string) { m.JoinSeparatorBytes = 1 }, Rule("join_separator_bytes")},
		{"join_separator_count one high", func(m *Manifest, _ *string) { m.JoinSeparatorCount++ }, Rule("join_separator_count")},
		{"join_separator_count one low", func(m *Manifest, _ *string) { m.JoinSeparatorCount-- }, Rule("join_separator_count")},
		{"bucket of an included row", func(m *Manifest, _ *string) { m.Segments[0].Bucket = "middle" }, Rule("bucket")},
		{"bucket of an excluded row", func(m *Manifest, _ *string) { m.Segments[1].Bucket = "" }, Rule("bucket")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, system := sample(t)
			tt.edit(m, &system)
			err := Validate(m, system)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate = %v, want ErrInvalid", err)
			}
			var re *RuleError
			if !errors.As(err, &re) || re.Rule != tt.rule || !errors.Is(err, tt.rule) {
				t.Errorf("Validate = %v, want the %s rule", err, tt.rule)
			}
			// ValidateStructure finds the same error, except where only a
			// hash can tell: then it must find nothing.
			m, system = sample(t)
			tt.edit(m, &system)
			serr := ValidateStructure(m, system)
			switch re.Rule {
			case "whole_prompt_digest":
				// Harn's order puts the whole digest first; what the
				// structure alone can see is the rule it located, if any.
				var want error
				if re.Located != nil && re.Located.Rule != "segment_digest" {
					want = re.Located
				}
				if (serr == nil) != (want == nil) || serr != nil && serr.Error() != want.Error() {
					t.Errorf("ValidateStructure = %v, want %v", serr, want)
				}
			case "segment_digest":
				if serr != nil {
					t.Errorf("ValidateStructure = %v, want nil (a digest rule)", serr)
				}
			default:
				if serr == nil || serr.Error() != err.Error() {
					t.Errorf("ValidateStructure = %v, want %v", serr, err)
				}
			}
		})
	}
}

func TestValidateRejectsEverySingleByteChange(t *testing.T) {
	m, system := sample(t)
	for i := range len(system) {
		b := []byte(system)
		b[i] ^= 0x01
		if err := Validate(m, string(b)); err == nil {
			t.Errorf("flipping byte %d went unnoticed", i)
		}
	}
}

func TestReplacementRootValidates(t *testing.T) {
	m, system := build(t, promptloom.Replacement("  exact bytes \n"))
	if system != "  exact bytes \n" || m.Root != "replacement" || len(m.Segments) != 1 {
		t.Fatalf("replacement: system %q, root %s, %d segments", system, m.Root, len(m.Segments))
	}
	leak := frag("leak", promptloom.Before, "leak")
	m.Segments = append(m.Segments, Segment{ID: leak.ID, Producer: "test", Bucket: "before", Included: true,
		Reason: "deliberate leak", Bytes: 4, Digest: digest.Of("leak")})
	served := system + "\n\nleak"
	m.SystemPromptBytes, m.WholePromptDigest = len(served), digest.Of(served)
	var rr *RuleError // replacement_root
	if err := Validate(m, served); !errors.As(err, &rr) {
		t.Errorf("Validate = %v, want ReplacementRootError", err)
	}
}

func TestAbsentPromptValidates(t *testing.T) {
	m, system := build(t, frag("blank", promptloom.Before, "  \n"))
	if system != "" || m.WholePromptDigest != digest.String("") || m.Segments[0].Reason != "empty body" {
		t.Fatalf("absent prompt: %q %s %+v", system, m.WholePromptDigest, m.Segments)
	}
	if err := Validate(m, "x"); err == nil {
		t.Error("an absent prompt's manifest validated a one-byte prompt")
	}
}

func TestSecretIsRedactedBeforeHashing(t *testing.T) {
	token := "ghp_" + strings.Repeat("Z9y8", 9)
	body := "Push with " + token + " when asked."
	m, system := build(t, frag("creds", promptloom.Before, body))
	seg := m.Segments[0]
	if seg.Bytes != len(body) {
		t.Errorf("bytes = %d, want the raw length %d", seg.Bytes, len(body))
	}
	if want := digest.String("Push with <redacted:github_token:40> when asked."); seg.Digest != want {
		t.Errorf("digest = %s, want the redacted text's %s", seg.Digest, want)
	}
	if seg.Digest == digest.String(body) {
		t.Error("digest is of the raw text")
	}
	canonical, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(canonical), token) || strings.Contains(string(canonical), "Z9y8") {
		t.Error("the secret appears in the manifest")
	}
	if err := Validate(m, system); err != nil {
		t.Error(err)
	}
}

func TestCanonicalAndReadRoundTrip(t *testing.T) {
	m, system := sample(t)
	m.ActorChain = json.RawMessage(`[{"role":"planner","b":1,"a":2}]`)
	c1, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(c1)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := back.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if string(c1) != string(c2) {
		t.Errorf("read then re-encode changed the manifest:\n%s\n%s", c1, c2)
	}
	if err := Validate(back, system); err != nil {
		t.Error(err)
	}
	h1, _ := m.ContentHash()
	if h1 != digest.Bytes(c1) || !strings.HasPrefix(h1.String(), "blake3:") {
		t.Errorf("ContentHash = %s, digest of the bytes = %s", h1, digest.Bytes(c1))
	}
}

func TestReadIsTolerant(t *testing.T) {
	// A manifest as another tool writes it: egress boundary, segment
	// producer under "source", unknown fields everywhere.
	in := `{"schema":"harn.llm.context_manifest.v1","boundary":"llm_request_payload_egress",
	  "call_role":"r","root":"composed","extra":{"x":1},
	  "segments":[{"id":"a","source":"host","bucket":"before","included":true,"reason":"unconditional",
	    "bytes":4,"digest":"` + digest.Of("base").String() + `","future":true}],
	  "whole_prompt_digest":"` + digest.Of("base").String() + `","system_prompt_bytes":4}`
	m, err := Read([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if m.Segments[0].Producer != "host" || m.Boundary != boundaryEgress {
		t.Errorf("read %+v", m)
	}
	if err := Validate(m, "base"); err != nil {
		t.Error(err)
	}
}

func TestReadRejects(t *testing.T) {
	empty := digest.String("").String()
	tests := []struct{ name, in, field string }{
		{"not json", `{`, ""},
		{"wrong schema", `{"schema":"v2","segments":[],"whole_prompt_digest":"` + empty + `","system_prompt_bytes":0}`, "schema"},
		{"other schema, other fields", `{"schema":"v2"}`, "schema"},
		{"unknown boundary", `{"schema":"harn.llm.context_manifest.v1","boundary":"b","segments":[],"whole_prompt_digest":"` + empty + `","system_prompt_bytes":0}`, "boundary"},
		{"no segments", `{"schema":"harn.llm.context_manifest.v1","whole_prompt_digest":"` + empty + `","system_prompt_bytes":0}`, "segments"},
		{"negative bytes", `{"schema":"harn.llm.context_manifest.v1","segments":[{"id":"a","included":true,"bytes":-1,"digest":"` + empty + `"}],"whole_prompt_digest":"` + empty + `","system_prompt_bytes":0}`, "segments[0].bytes"},
		{"malformed whole digest", `{"schema":"harn.llm.context_manifest.v1","segments":[],"whole_prompt_digest":"d","system_prompt_bytes":0}`, "whole_prompt_digest"},
		{"malformed segment digest", `{"schema":"harn.llm.context_manifest.v1","segments":[{"id":"a","included":true,"bytes":0,"digest":"blake3:AF"}],"whole_prompt_digest":"` + empty + `","system_prompt_bytes":0}`, "segments[0].digest"},
		{"segment without id", `{"schema":"harn.llm.context_manifest.v1","segments":[{"included":true,"bytes":1,"digest":"` + empty + `"}],"whole_prompt_digest":"` + empty + `","system_prompt_bytes":0}`, "segments[0].id"},
	}
	for _, tt := range tests {
		_, err := Read([]byte(tt.in))
		var re *ReadError
		if !errors.As(err, &re) || !errors.Is(err, ErrUnreadable) || re.Field != tt.field {
			t.Errorf("%s: Read error = %v, want a ReadError on %q", tt.name, err, tt.field)
		}
	}
}

// An adapter that adds ten bytes: 17 in, 27 out.
func TestForEgress(t *testing.T) {
	m, system := build(t, frag("a", promptloom.Before, "You are careful.!"))
	if len(system) != 17 {
		t.Fatalf("system is %d bytes", len(system))
	}
	sent := system + " [adapter]"
	e, err := m.ForEgress(sent)
	if err != nil {
		t.Fatal(err)
	}
	if e.Root != "transformed" || e.Boundary != boundaryEgress || e.EgressDelta.BytesAdded != 10 || e.EgressDelta.BytesRemoved != 0 ||
		e.EgressDelta.InputSystemPromptBytes != 17 || e.EgressDelta.OutputSystemPromptBytes != 27 {
		t.Errorf("egress: %+v %+v", e, e.EgressDelta)
	}
	last := e.Segments[len(e.Segments)-1]
	if last.ID != "egress:system" || last.Producer != "llm_request_payload" || !last.Included || last.Bytes != 27 ||
		last.Reason != "provider capability and system-placement normalization" {
		t.Errorf("egress row %+v", last)
	}
	if e.Segments[0].Included || e.Segments[0].Reason != "superseded by system transform" {
		t.Errorf("assembled row %+v", e.Segments[0])
	}
	if err := Validate(e, sent); err != nil {
		t.Error(err)
	}
	if m.Root != "composed" || m.Segments[0].Reason != "unconditional" {
		t.Error("ForEgress changed the manifest it projects")
	}
	// Unchanged bytes: only the boundary moves.
	same, err := m.ForEgress(system)
	if err != nil || same.Root != "composed" || same.EgressDelta != nil || same.Boundary != boundaryEgress {
		t.Errorf("identity egress: %+v, %v", same, err)
	}
}

// A segment that starts or ends inside a character of the prompt breaks
// segment_boundary, even when the byte counts add up and the whole digest
// holds; Validate and ValidateStructure agree on it.
func TestValidateBoundary(t *testing.T) {
	r, err := promptloom.Reduce([]promptloom.Fragment{{ID: "primary[0]", Source: "primary", Body: "é"}, {ID: "primary[1]", Source: "primary", Body: "x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := New(r, "")
	if err := Validate(m, r.System); err != nil {
		t.Fatal(err)
	}
	m.Segments[0].Bytes, m.Segments[1].Bytes = 1, 2 // "é" is two bytes: the cut falls inside it
	for name, validate := range map[string]func(*Manifest, string) error{"Validate": Validate, "ValidateStructure": ValidateStructure} {
		var b *RuleError
		if err := validate(m, r.System); !errors.As(err, &b) || b.ID != "primary[0]" || b.Rule != "segment_boundary" {
			t.Errorf("%s = %v, want the segment_boundary rule on primary[0]", name, err)
		}
	}
}
