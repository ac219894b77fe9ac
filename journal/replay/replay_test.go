package replay

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/manifest"

	"github.com/google/go-cmp/cmp"
)

var ctx = context.Background()

func request(t *testing.T, call, options string) journal.Request {
	t.Helper()
	e, err := explain.Explain([]byte(options), nil)
	if err != nil {
		t.Fatal(err)
	}
	return journal.Request{Call: call, System: e.System, Manifest: e.Manifest,
		Messages: json.RawMessage(`[{"role":"user","content":"hello ` + call + `"}]`), Tools: json.RawMessage(`[{"name":"todo"}]`)}
}

var echo = journal.ModelFunc(func(_ context.Context, req journal.Request) (journal.Response, error) {
	return journal.Response{Text: "reply to " + req.Call}, nil
})

func TestPins(t *testing.T) {
	recorded := eventlog.NewMemory(nil)
	rec, err := New(ctx, echo, &Options{Log: recorded})
	if err != nil {
		t.Fatal(err)
	}
	first := request(t, "c1", `{"system": ["Rule one.", "Rule two."]}`)
	resp, err := rec.Complete(ctx, first)
	if err != nil || resp.Text != "reply to c1" || rec.calls != 1 {
		t.Fatalf("record: %+v %v", resp, err)
	}

	never := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
		t.Fatal("strict mode called the model")
		return journal.Response{}, nil
	})
	replay, err := New(ctx, never, &Options{Strict: true, Log: eventlog.NewMemory(nil), Recorded: recorded})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := replay.Complete(ctx, first); err != nil || resp.Text != "reply to c1" || replay.calls != 0 {
		t.Errorf("strict hit: %+v %v", resp, err)
	}
	changed := request(t, "c1", `{"system": ["Rule one.", "Rule 2."]}`)
	_, err = replay.Complete(ctx, changed)
	var miss *MissError
	if !errors.Is(err, ErrPinMiss) || !errors.As(err, &miss) || miss.Nearest != "c1" || !miss.SystemChanged ||
		len(miss.Changed) != 1 || miss.Changed[0].ID != "system[1]" || miss.Changed[0].What != "digest" {
		t.Errorf("strict miss: %v (%+v)", err, miss)
	}
	msgs := first
	msgs.Messages = json.RawMessage(`[{"role":"user","content":"something else"}]`)
	if _, err := replay.Complete(ctx, msgs); !errors.As(err, &miss) || miss.SystemChanged {
		t.Errorf("a miss on messages only: %v", err)
	}
}

// TestPinJSON: a pin keeps of each manifest row only id, included,
// digest, register and rank, in that order, as pins have always been
// written; it reads back with just those fields.
func TestPinJSON(t *testing.T) {
	two := 2
	full := pin{Key: digest.Of("k"), Call: "c", SystemDigest: digest.Of("s"), Response: journal.Response{Text: "<ok> & on"},
		Segments: pinSegments([]manifest.Segment{
			{ID: "a", Producer: "p", Bucket: "before", Included: true, Reason: "unconditional", Bytes: 3, Digest: digest.Of("01")},
			{ID: "b<", Producer: "p", Bucket: "after", Reason: "shed by budget: craft rank 2", Digest: digest.Of("02"),
				Register: "craft", Rank: &two, Sources: []string{"s:1"}, Tokens: &two},
		})}
	k, s := digest.Of("k").String(), digest.Of("s").String()
	cases := []struct {
		name string
		pin  pin
		want string
	}{
		{"full", full, `{"key":"` + k + `","call":"c","system_digest":"` + s + `","segments":[` +
			`{"id":"a","included":true,"digest":"` + digest.Of("01").String() + `"},` +
			`{"id":"b\u003c","included":false,"digest":"` + digest.Of("02").String() + `","register":"craft","rank":2}],` +
			`"response":{"text":"\u003cok\u003e \u0026 on"}}`},
		{"no segments", pin{Key: digest.Of("k"), SystemDigest: digest.Of("s"), Segments: pinSegments([]manifest.Segment{})},
			`{"key":"` + k + `","call":"","system_digest":"` + s + `","segments":[],"response":{"text":""}}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.pin)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s: got  %s\nwant %s", c.name, b, c.want)
		}
		var back pin
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.pin, back); d != "" {
			t.Errorf("%s: read back (-want +got):\n%s", c.name, d)
		}
	}
}

// A request key (what a pin is keyed by) is taken over redacted messages,
// tools and parameters, as a receipt is: two requests that differ only inside a secret have one key,
// so the key (which the event log keeps) confirms no guess at the secret.
func TestRequestKeysHashRedactedValues(t *testing.T) {
	base := journal.Request{Call: "c1", System: "x"}
	key := func(messages, tools, params string) digest.Digest {
		r := base
		r.Messages, r.Tools, r.Parameters = json.RawMessage(messages), json.RawMessage(tools), json.RawMessage(params)
		k, err := keyOf(r)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, tc := range []struct{ a, b [3]string }{
		{[3]string{`[{"content":"use password: hunter22"}]`, `[]`, `{}`}, [3]string{`[{"content":"use password: hunter23"}]`, `[]`, `{}`}},
		{[3]string{`[]`, `[{"token":"ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}]`, `{}`}, [3]string{`[]`, `[{"token":"ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}]`, `{}`}},
		{[3]string{`[]`, `[]`, `{"api_key":"sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaa"}`}, [3]string{`[]`, `[]`, `{"api_key":"sk-ant-api03-bbbbbbbbbbbbbbbbbbbbbbbb"}`}},
	} {
		if ka, kb := key(tc.a[0], tc.a[1], tc.a[2]), key(tc.b[0], tc.b[1], tc.b[2]); ka != kb {
			t.Errorf("%v and %v: keys differ, so the key hashes a secret", tc.a, tc.b)
		}
	}
	if key(`[{"content":"a"}]`, `[]`, `{}`) == key(`[{"content":"b"}]`, `[]`, `{}`) {
		t.Error("different messages share a key")
	}
}
