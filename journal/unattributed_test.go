package journal

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/transcript"
)

// A call made without a manifest, on purpose, is recorded by its body's
// digest and verifies; Verify counts it. Without Unattributed it is
// refused, and an unattributed call may not carry a manifest.
func TestUnattributedCall(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Session: "s"})
	m := ModelFunc(func(context.Context, Request) (Response, error) { return Response{Text: "ok"}, nil })
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"token ghp_` + strings.Repeat("a1B2", 10) + `"}]}`)
	if _, err := j.Call(context.Background(), m, Request{Call: "c", Body: body}); err == nil {
		t.Fatal("a call without a manifest that does not say so was made")
	}
	if _, err := j.Call(context.Background(), m, Request{Call: "c", Body: body, Unattributed: true}); err != nil {
		t.Fatal(err)
	}
	mf := request(t, "c", `{"system":"Be brief."}`).Manifest
	if _, err := j.Call(context.Background(), m, Request{Call: "c", Body: body, Unattributed: true, Manifest: mf}); err == nil {
		t.Fatal("an unattributed call with a manifest was made")
	}
	j.Close()
	if strings.Contains(buf.String(), "ghp_") || !strings.Contains(buf.String(), `"served_context":null`) {
		t.Fatalf("transcript: %s", buf.String())
	}
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || !rep.OK() || rep.Unattributed != 1 || !rep.Calls[0].Unattributed {
		t.Fatalf("report %+v, %v", rep, err)
	}
	// A request line that claims no receipt but names no body digest fails.
	bad := strings.Replace(buf.String(), `"body_content_hash":"blake3:`, `"body_content_hash":"md5:`, 1)
	rep, _ = transcript.Verify(strings.NewReader(bad), nil)
	if rep.OK() {
		t.Fatal("a broken unattributed request verified")
	}
}

// An unattributed call keeps its whole body, redacted, and the body is
// held to its digest: an edited body fails even with the chain
// recomputed, and a body that is not JSON is kept as text.
func TestUnattributedBodyIsKept(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Session: "s"})
	m := ModelFunc(func(context.Context, Request) (Response, error) { return Response{Text: "ok"}, nil })
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"where is main? ghp_` + strings.Repeat("a1B2", 10) + `"}]}`)
	for _, b := range [][]byte{body, []byte("not json ghp_" + strings.Repeat("a1B2", 10))} {
		if _, err := j.Call(context.Background(), m, Request{Call: "c", Body: b, Unattributed: true}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	out := buf.String()
	if !strings.Contains(out, `"body_text":"not json <redacted`) || strings.Contains(out, "ghp_") {
		t.Fatalf("transcript: %s", out)
	}
	rep, err := transcript.Verify(strings.NewReader(out), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("report %+v, %v", rep, err)
	}
	sent, err := transcript.Requests(buf.Bytes(), rep)
	if err != nil || len(sent) != 2 || string(sent[0].Body) != `{"messages":[{"content":"where is main? <redacted:github_token:44>","role":"user"}],"model":"m"}` {
		t.Fatalf("requests %v: %+v", err, sent)
	}
	for _, edit := range [][2]string{{"where is main?", "where is lib?"}, {`"body_text":"not json`, `"body_text":"not JSON`}} {
		bad := rechain(strings.Replace(out, edit[0], edit[1], 1))
		if rep, _ := transcript.Verify(strings.NewReader(bad), nil); rep.OK() {
			t.Errorf("%q edited and verified", edit[0])
		}
	}
}
