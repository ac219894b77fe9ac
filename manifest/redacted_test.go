package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
)

var token = "ghp_" + strings.Repeat("Z9y8", 9)

// Every string New writes is redacted: a secret in an id, a producer, a
// source or call_role reaches neither the manifest nor its canonical bytes.
func TestNewRedactsEveryString(t *testing.T) {
	f := frag("tool:"+token, promptloom.Before, "body")
	f.Producer = "producer " + token
	f.Sources = []string{"clean", "src " + token}
	f.Register = budget.Craft
	r := reduce(t, f)
	m := New(r, "role "+token)
	s := m.Segments[0]
	if s.ID != redact.String(f.ID) || s.Producer != redact.String(f.Producer) || m.CallRole != redact.String("role "+token) ||
		s.Sources[0] != "clean" || s.Sources[1] != redact.String("src "+token) {
		t.Errorf("not redacted: %+v call_role %q", s, m.CallRole)
	}
	if err := m.SetActorChain(json.RawMessage(`[{"who":"` + token + `","api_key":{"v":1},"n":9007199254740993}]`)); err != nil {
		t.Fatal(err)
	}
	c, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(c), "Z9y8") {
		t.Errorf("the secret reached the canonical manifest: %s", c)
	}
	wantChain := `[{"api_key":"[redacted]","n":9007199254740993,"who":` + string(mustJSON(redact.String(token))) + `}]`
	if string(m.ActorChain) != wantChain {
		t.Errorf("actor_chain = %s, want %s", m.ActorChain, wantChain)
	}
	if err := Validate(m, r.System); err != nil {
		t.Errorf("a redacted manifest must still validate: %v", err)
	}
}

// Two fragments whose ids differ only in a secret of one length redact to
// one id; with equal bodies the manifest cannot tell them apart, which the
// duplicate rule reports.
func TestRedactedIDsThatCollideAreDuplicates(t *testing.T) {
	other := "ghp_" + strings.Repeat("Q7w6", 9)
	r := reduce(t, frag("a "+token, promptloom.Before, "same"), frag("a "+other, promptloom.Before, "same"))
	var dup *RuleError // duplicate_segment
	if err := Validate(New(r, "agent"), r.System); !errors.As(err, &dup) || strings.Contains(dup.Error(), "Z9y8") {
		t.Errorf("Validate = %v, want a DuplicateSegmentError naming the redacted id", err)
	}
}

// Canonical is Harn's stable_redacted_json_hash input
// (crates/harn-vm/src/llm/content_hash.rs): the redacted manifest in
// canonical JSON, keys in byte order at every depth, no white space; the
// content hash is BLAKE3 over exactly those bytes. The expected text is
// written out by those rules.
func TestCanonicalIsHarnsCanonicalJSON(t *testing.T) {
	r := reduce(t, frag("a", promptloom.Before, "alpha"))
	m := New(r, "agent")
	d := digest.Of("alpha").String()
	want := `{"actor_chain":null,"boundary":"observed_llm_call_pre_egress","call_role":"agent",` +
		`"join_separator":"\n\n","join_separator_bytes":2,"join_separator_count":0,` +
		`"messages":"served_context_digest_only","root":"composed","schema":"harn.llm.context_manifest.v1",` +
		`"scope":"system_prompt","segments":[{"bucket":"before","bytes":5,"digest":"` + d + `","id":"a",` +
		`"included":true,"producer":"a","reason":"unconditional"}],"system_prompt_bytes":5,"whole_prompt_digest":"` + d + `"}`
	c, err := m.Canonical()
	if err != nil || string(c) != want {
		t.Fatalf("Canonical\n got %s (%v)\nwant %s", c, err, want)
	}
	h, err := m.ContentHash()
	if err != nil || h != digest.Bytes([]byte(want)) {
		t.Errorf("ContentHash = %s, want BLAKE3 of the canonical bytes %s", h, digest.Bytes([]byte(want)))
	}
	// A manifest read from elsewhere, unredacted, hashes as its redaction.
	m.CallRole = token
	m2 := *m
	m2.CallRole = redact.String(token)
	h1, _ := m.ContentHash()
	h2, _ := m2.ContentHash()
	if h1 != h2 {
		t.Errorf("the hash of an unredacted manifest is not that of its redaction: %s, %s", h1, h2)
	}
}

func TestReadRejectsDuplicateKeysByPath(t *testing.T) {
	base := `{"schema":"harn.llm.context_manifest.v1","segments":[{"id":"a","included":true,"bytes":1,"digest":"d"%s}],"whole_prompt_digest":"d","system_prompt_bytes":1%s}`
	for _, tt := range []struct{ seg, top, field string }{
		{`,"digest":"e"`, ``, "segments[0].digest"},
		{``, `,"schema":"harn.llm.context_manifest.v1"`, "schema"},
		{``, `,"actor_chain":[{"r":1,"r":2}]`, "actor_chain[0].r"},
	} {
		in := strings.Replace(strings.Replace(base, "%s", tt.seg, 1), "%s", tt.top, 1)
		_, err := Read([]byte(in))
		var re *ReadError
		if !errors.As(err, &re) || !errors.Is(err, ErrUnreadable) || re.Field != tt.field || !strings.Contains(re.detail, "twice") {
			t.Errorf("Read(%s) = %v, want a duplicate key at %s", in, err, tt.field)
		}
	}
}

// Absent fields that can have one value only read as that value; present,
// they are kept for Validate to judge.
func TestReadDefaultsAndKeeps(t *testing.T) {
	d := digest.Of("a").String()
	seg := `{"id":"x","bucket":"before","included":true,"bytes":1,"digest":"` + d + `"}`
	in := `{"schema":"harn.llm.context_manifest.v1","call_role":"r","segments":[` + seg + `,` + strings.Replace(seg, `"x"`, `"y"`, 1) +
		`],"whole_prompt_digest":"` + digest.Of("a\n\na").String() + `","system_prompt_bytes":4}`
	m, err := Read([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if m.JoinSeparatorBytes != 2 || m.JoinSeparatorCount != 1 || m.Scope != scope || m.Messages != messages {
		t.Errorf("defaults: %+v", m)
	}
	if err := Validate(m, "a\n\na"); err != nil {
		t.Error(err)
	}
	m, err = Read([]byte(strings.Replace(in, `"call_role"`, `"join_separator_count":5,"scope":"messages","call_role"`, 1)))
	if err != nil || m.JoinSeparatorCount != 5 || m.Scope != "messages" {
		t.Errorf("kept: %+v, %v", m, err)
	}
}

func reduce(t *testing.T, frags ...promptloom.Fragment) *promptloom.Reduction {
	t.Helper()
	r, err := promptloom.Reduce(frags, &promptloom.Options{Tools: []string{"todo"}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustJSON(s string) []byte { return pjson.AppendString(nil, s) }

// A manifest written elsewhere with a secret in an id, call_role or the
// actor chain reads back redacted, so verify cannot print the secret.
func TestReadRedacts(t *testing.T) {
	d := digest.Of("a").String()
	in := `{"schema":"harn.llm.context_manifest.v1","call_role":"` + token + `","actor_chain":{"password":"x","who":"` + token + `"},` +
		`"segments":[{"id":"` + token + `","bucket":"before","included":true,"bytes":1,"digest":"` + d + `","sources":["` + token + `"]}],` +
		`"whole_prompt_digest":"` + d + `","system_prompt_bytes":1}`
	m, err := Read([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := m.Canonical()
	if strings.Contains(m.CallRole+m.Segments[0].ID+m.Segments[0].Sources[0]+string(m.ActorChain)+string(c), "Z9y8") ||
		!strings.Contains(string(m.ActorChain), `"password":"[redacted]"`) {
		t.Errorf("read manifest holds the secret: %+v %s", m, m.ActorChain)
	}
	if err := Validate(m, "a"); err != nil {
		t.Error(err)
	}
}

// TestRedactedManyProducers: producers and reasons are redacted through a
// memo of up to 256 distinct values; past it, and when neighbouring rows
// repeat or alternate, every row still carries its own value redacted.
func TestRedactedManyProducers(t *testing.T) {
	var frags []promptloom.Fragment
	for i := range 600 {
		f := promptloom.Primary(fmt.Sprintf("body %d", i))
		f.ID = fmt.Sprintf("f%d", i)
		switch i % 3 {
		case 0: // a producer of its own, holding a secret
			f.Producer = fmt.Sprintf("agent-%d ghp_%036d", i, i)
		case 1: // the same as the row before it
			f.Producer = fmt.Sprintf("agent-%d ghp_%036d", i-1, i-1)
		default: // one shared by many rows
			f.Producer = "shared"
		}
		frags = append(frags, f)
	}
	r, err := promptloom.Reduce(frags, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := New(r, "")
	for i, s := range m.Segments {
		if want := redact.String(frags[i].Producer); s.Producer != want {
			t.Fatalf("row %d: producer %q, want %q", i, s.Producer, want)
		}
		if strings.Contains(s.Producer, "ghp_") {
			t.Fatalf("row %d: producer not redacted: %q", i, s.Producer)
		}
		if want := redact.String(r.Rows[i].Reason); s.Reason != want {
			t.Fatalf("row %d: reason %q, want %q", i, s.Reason, want)
		}
	}
}
