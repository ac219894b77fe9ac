package payload

import "testing"

// Text reads a part's text as request counts it: a string, a text block's
// text member in any of the providers' text types, and never a tool's.
func TestPartText(t *testing.T) {
	for _, c := range []struct {
		p    Part
		text string
		ok   bool
	}{
		{Part{Section: "messages", Raw: []byte(`"hi \u00e9"`)}, "hi é", true},
		{Part{Section: "system", Type: "text", Raw: []byte(`{"type":"text","text":"be brief","cache_control":{"type":"ephemeral"}}`)}, "be brief", true},
		{Part{Section: "messages", Type: "input_text", Raw: []byte(`{"type":"input_text","text":"a"}`)}, "a", true},
		{Part{Section: "messages", Type: "output_text", Raw: []byte(`{"text":"b","type":"output_text"}`)}, "b", true},
		{Part{Section: "messages", Raw: []byte(`{"text":"gemini"}`)}, "gemini", true},
		{Part{Section: "messages", Type: "tool_use", Raw: []byte(`{"type":"tool_use","text":"x"}`)}, "", false},
		{Part{Section: "messages", Type: "text", Raw: []byte(`{"type":"text","text":7}`)}, "", false},
		{Part{Section: "tools", Raw: []byte(`{"name":"t","text":"not a text"}`)}, "", false},
	} {
		if text, ok := c.p.Text(); text != c.text || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.p.Raw, text, ok, c.text, c.ok)
		}
	}
}
