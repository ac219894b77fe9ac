package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
)

func pjsonString(s string) []byte { return pjson.AppendString(nil, s) }

// A templated fragment's row records the template's file and digest, its
// includes and the bindings read (names redacted, no spans); Read gives
// them back, and a row without a template has no template member.
func TestTemplateRow(t *testing.T) {
	secret := "sk-ant-api03-" + strings.Repeat("a", 93) + "AA"
	tf := frag("system[0]", promptloom.Before, "Work in /srv/app.")
	tf.Template = &promptloom.Template{
		File:     "prompts/sys.prompt",
		Digest:   digest.Of("Work in {{ cwd }}."),
		Includes: map[string]digest.Digest{"prompts/part.prompt": digest.Of("x")},
		Bindings: map[string]digest.Digest{"cwd": digest.Bytes([]byte(`"/srv/app"`)), "k[\"" + secret + "\"]": digest.Bytes(nil)},
		Spans:    []promptloom.Span{{Start: 0, End: 8, Kind: "text", Line: 1, Col: 1}},
	}
	m, system := build(t, frag("plain", promptloom.Before, "alpha"), tf)
	c, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	want := `"template":{"bindings":{"cwd":"` + digest.Bytes([]byte(`"/srv/app"`)).String() + `",` + string(pjsonString(redact.String(`k["`+secret+`"]`))) + `:"` + digest.Bytes(nil).String() +
		`"},"digest":"` + digest.Of("Work in {{ cwd }}.").String() + `","file":"prompts/sys.prompt","includes":{"prompts/part.prompt":"` + digest.Of("x").String() + `"}}`
	if !strings.Contains(string(c), want) {
		t.Errorf("canonical manifest lacks the template member %s:\n%s", want, c)
	}
	if strings.Count(string(c), `"template"`) != 1 || strings.Contains(string(c), "spans") || strings.Contains(string(c), secret) {
		t.Errorf("only the templated row has a template, without spans or secrets:\n%s", c)
	}
	back, err := Read(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(back, system); err != nil {
		t.Fatal(err)
	}
	c2, _ := back.Canonical()
	if string(c2) != string(c) {
		t.Errorf("Read then Canonical changed the bytes:\n%s\n%s", c, c2)
	}
	if back.Segments[0].Template != nil || back.Segments[1].Template.File != "prompts/sys.prompt" {
		t.Errorf("read back %+v", back.Segments)
	}
}

// A template with no bindings read records an empty object, not null.
func TestTemplateRowNoBindings(t *testing.T) {
	tf := frag("a", promptloom.Before, "fixed")
	tf.Template = &promptloom.Template{Digest: digest.Of("fixed")}
	m, _ := build(t, tf)
	c, _ := m.Canonical()
	if !strings.Contains(string(c), `"template":{"bindings":{},"digest":"`) {
		t.Errorf("got %s", c)
	}
}

func TestReadRejectsTemplate(t *testing.T) {
	d := digest.Of("x").String()
	seg := func(tmpl string) string {
		return `{"schema":"harn.llm.context_manifest.v1","segments":[{"id":"a","included":true,"bytes":1,"digest":"` + d +
			`","template":` + tmpl + `}],"whole_prompt_digest":"` + d + `","system_prompt_bytes":1}`
	}
	for _, tt := range []struct{ name, tmpl, field string }{
		{"not an object", `"t"`, "segments[0].template"},
		{"no digest", `{"bindings":{}}`, "segments[0].template.digest"},
		{"no bindings", `{"digest":"` + d + `"}`, "segments[0].template.bindings"},
		{"bindings a list", `{"digest":"` + d + `","bindings":[]}`, "segments[0].template.bindings"},
		{"bad binding digest", `{"digest":"` + d + `","bindings":{"cwd":"x"}}`, "segments[0].template.bindings.cwd"},
		{"bad include digest", `{"digest":"` + d + `","bindings":{},"includes":{"p":1}}`, "segments[0].template.includes.p"},
	} {
		_, err := Read([]byte(seg(tt.tmpl)))
		var re *ReadError
		if !errors.As(err, &re) || !errors.Is(err, ErrUnreadable) || re.Field != tt.field {
			t.Errorf("%s: Read error = %v, want a ReadError on %q", tt.name, err, tt.field)
		}
	}
	if _, err := Read([]byte(seg(`null`))); err != nil {
		t.Errorf("a null template is no template: %v", err)
	}
}
