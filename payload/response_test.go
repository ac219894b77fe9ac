package payload

import (
	"strings"
	"testing"
)

// Events after an OpenAI stream's data: [DONE] are not folded into the
// summary: the SDKs stop reading there, and the summary is what they saw.
func TestChatStreamStopsAtDone(t *testing.T) {
	chunk := func(id, text, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"` + id + `","model":"gpt-x","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":` + f + `}]}` + "\n\n"
	}
	stream := chunk("c1", "SAFE", "") + chunk("c1", "", "stop") + "data: [DONE]\n\n" +
		chunk("c2", " INJECTED", "length")
	r, whole := Summarize(OpenAIChat, []byte(stream), true)
	if !whole || r.Text != "SAFE" || r.StopReason != "stop" || r.ID != "c1" {
		t.Errorf("summary %+v (whole %v), want SAFE, stop, c1", r, whole)
	}
	if strings.Contains(r.Text, "INJECTED") {
		t.Error("an event after [DONE] reached the summary")
	}
}
