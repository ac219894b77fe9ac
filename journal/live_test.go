package journal

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The provider's own cache verdict the transport put in a response's
// usage is what the verifier reads back, for cache --transcript to show.
func TestVerifyReadsTheProvidersCacheVerdict(t *testing.T) {
	var buf bytes.Buffer
	j := New(&buf, &Options{Clock: clock, Session: "s1"})
	model := ModelFunc(func(_ context.Context, req Request) (Response, error) {
		return Response{Text: "ok", Usage: &Usage{InputTokens: 10, CacheReadTokens: 4, CacheMissReason: "tools_changed", CacheMissedTokens: 6}}, nil
	})
	if _, err := j.Call(ctx, model, request(t, "c1", `{"system": ["You are careful."]}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(strings.NewReader(buf.String()), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("%v %+v", err, rep)
	}
	u := rep.Calls[0].Usage
	if u == nil || u.CacheMissReason != "tools_changed" || u.CacheMissedTokens != 6 || u.CacheReadTokens != 4 {
		t.Fatalf("usage %+v", u)
	}
}
