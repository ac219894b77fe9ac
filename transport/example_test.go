package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/transcript"
	"github.com/promptloom/promptloom/transport"
)

// An SDK's HTTP client wrapped: a call goes through the transport to a
// provider (here a fake one speaking Anthropic's Messages API), is held
// to the prompt on its context, and is journaled with its answer; the
// transcript then verifies.
func Example() {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",`+
			`"content":[{"type":"text","text":"main is in cmd/main.go."}],"stop_reason":"end_turn",`+
			`"usage":{"input_tokens":12,"output_tokens":7}}`)
	}))
	defer provider.Close()

	r, _ := promptloom.Reduce([]promptloom.Fragment{promptloom.Primary("You are the harness's agent.")}, nil)
	var tr bytes.Buffer
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	j := journal.New(&tr, &journal.Options{Session: "s1", Clock: clock})
	rt := transport.New(nil, j, nil)
	client := &http.Client{Transport: rt} // give client to the SDK

	// What the SDK does with the context the harness gives its call.
	ctx := transport.With(context.Background(), &transport.Call{Name: "turn-1", Manifest: manifest.New(r, "agent.main"), System: r.System})
	body := `{"model":"claude-sonnet-4-5","max_tokens":64,"system":` + strconv.Quote(r.System) +
		`,"messages":[{"role":"user","content":"Where is main?"}]}`
	req, _ := http.NewRequestWithContext(ctx, "POST", provider.URL+"/v1/messages", bytes.NewReader([]byte(body)))
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	j.Close() // the call was recorded by the time its body ended

	for _, line := range bytes.Split(bytes.TrimSpace(tr.Bytes()), []byte("\n")) {
		var l struct {
			Kind     string
			Response struct{ Text string }
		}
		json.Unmarshal(line, &l)
		fmt.Println(strings.TrimSpace(l.Kind + " " + l.Response.Text))
	}
	rep, err := transcript.Verify(bytes.NewReader(tr.Bytes()), nil)
	fmt.Println("verified:", err == nil && rep.OK())
	// Output:
	// journal_open
	// system_prompt
	// context_manifest
	// provider_call_request
	// provider_call_response main is in cmd/main.go.
	// journal_close
	// verified: true
}
