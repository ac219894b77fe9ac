package journal

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/harn/redact"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/payload"
)

// itemwiseBody is an agent's request of turn n: a history that grows by a
// turn each call, some of it holding secrets, in a shape chosen by seed
// (key order, white space, escapes, numbers, a credential-like array).
func itemwiseBody(r *rand.Rand, n int) []byte {
	const token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
	var msgs []string
	msgs = append(msgs, `{"role":"system","content":"You are careful. `+strings.Repeat("Plan first. ", 300)+`"}`)
	for i := range n {
		content := fmt.Sprintf("turn %d: %s", i, strings.Repeat("words of the history ", 20+i%7))
		if i%3 == 1 {
			content += " the key is " + token
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%q}`, content))
		msgs = append(msgs, fmt.Sprintf(`{ "content" : null , "role":"assistant","tool_calls":[{"id":"c%d","type":"function","function":{"name":"grep","arguments":"{\"q\":\"x\",\"n\":%d}"}}]}`, i, i))
		msgs = append(msgs, fmt.Sprintf(`{"role":"tool","tool_call_id":"c%d","content":"found\u00e9 %d","authorization":"Bearer abc%d"}`, i, i, i))
	}
	tools := `[{"type":"function","function":{"name":"grep","description":"` + strings.Repeat("searches ", 200) + `","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]`
	members := []string{
		`"model":"gpt-4.1"`,
		`"messages":[` + strings.Join(msgs, ",\n ") + `]`,
		`"tools":` + tools,
		`"temperature":1.0`,
		`"max_tokens":1e3`,
		`"stream_options":{"include_usage":true,"z":[1,2]}`,
		`"api_key":["sk-live-1","sk-live-2"]`,
		`"empty":[]`,
		`"esc\u0061ped":[{"b":1,"a":2}]`,
	}
	r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	sep := []string{",", " ,\n\t", ", "}[r.IntN(3)]
	return []byte(" {" + strings.Join(members, sep) + "}\n")
}

// Redacting item by item, with the items of the previous body cached, is
// redact.JSON of the whole body byte for byte, call after call, and
// hashes alike; a history that changes in place (a secret put into an old
// message) is redacted again, not served from the cache.
func TestItemwiseRedactionIsTheWholeBodys(t *testing.T) {
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 7))
		j := New(&bytes.Buffer{}, nil)
		for n := 1; n < 12; n++ {
			body := itemwiseBody(r, n)
			if n == 7 {
				// An old message changed where it stands: its bytes, and
				// so its key, are new.
				body = bytes.Replace(body, []byte("turn 0: "), []byte("turn 0: sk-proj-"+strings.Repeat("Ab1", 16)+" "), 1)
			}
			want, err := redact.JSON(body)
			if err != nil {
				t.Fatal(err)
			}
			// Every other call as the transport makes it: the body read
			// by payload.Read, its syntax checked there.
			scanned := false
			if n%2 == 0 {
				if _, err := payload.Read(body, payload.OpenAIChat); err != nil {
					t.Fatal(err)
				}
				scanned = true
			}
			got, hash, err := j.retainBody(body, scanned)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("seed %d, call %d: itemwise redaction differs from the whole body's\n got %.300s\nwant %.300s", seed, n, got, want)
			}
			if _, whole, _ := j.retain(body); hash != whole {
				t.Fatalf("seed %d, call %d: hash %s, want %s", seed, n, hash, whole)
			}
			for _, secret := range []string{"ghp_aB3d", "sk-proj-Ab1", "Bearer abc", "sk-live"} {
				if bytes.Contains(got, []byte(secret)) {
					t.Fatalf("seed %d, call %d: %q kept", seed, n, secret)
				}
			}
			if n > 2 && j.redacted.last == nil {
				t.Fatalf("seed %d, call %d: nothing cached", seed, n)
			}
		}
	}
}

// A body the canonical reading refuses (a key twice, bytes that are not
// UTF-8, not an object) is refused as retain refuses it.
func TestItemwiseRedactionRefusesAsRetain(t *testing.T) {
	pad := `"messages":[{"content":"` + strings.Repeat("x", minItemwise) + `"}]`
	for _, body := range []string{
		`{"a":1,"a":2,` + pad + `}`,
		`{"b":"\xff",` + pad + `}`,
		`{` + pad + `,"c":[{"d":1,"d":1}]}`,
		`[` + strings.Repeat(`{"a":1},`, minItemwise/8) + `1]`,
		`{` + pad + `} x`,
		`{` + pad + `,"n":1e999}`,
	} {
		j := New(&bytes.Buffer{}, nil)
		_, _, want := j.retain([]byte(body))
		got, _, err := j.retainBody([]byte(body), false)
		if (err == nil) != (want == nil) || err != nil && err.Error() != want.Error() {
			t.Errorf("%.40s…: err %v, retain's %v", body, err, want)
		}
		if want != nil && got != nil {
			t.Errorf("%.40s…: kept %d bytes of a body retain refuses", body, len(got))
		}
	}
}

// Each journal (each session) caches its own items: a second session
// starts with none of the first's, and a restarted session (a file cut
// back under it) with none of its earlier self's.
func TestItemwiseRedactionIsPerSession(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	body := itemwiseBody(r, 4)
	a, b := New(&bytes.Buffer{}, nil), New(&bytes.Buffer{}, nil)
	if _, _, err := a.retainBody(body, false); err != nil {
		t.Fatal(err)
	}
	if a.redacted.last == nil {
		t.Fatal("the first session cached nothing")
	}
	if b.redacted.last != nil {
		t.Fatal("the second session starts with the first's items")
	}
	a.mu.Lock()
	a.restart(Tail{Prev: chain.Genesis, Seq: 1})
	a.mu.Unlock()
	if a.redacted.last != nil {
		t.Fatal("a restarted session kept its items")
	}
}

// BenchmarkRetainBody is an agent's body redacted as the journal keeps it:
// whole (retain) against item by item, the previous call's items cached
// (the same body again, and a body one turn longer).
func BenchmarkRetainBody(b *testing.B) {
	// The same member order and spacing (the same seed), one turn apart.
	prev, body := itemwiseBody(rand.New(rand.NewPCG(3, 4)), 19), itemwiseBody(rand.New(rand.NewPCG(3, 4)), 20)
	b.Run("whole", func(b *testing.B) {
		j := New(io.Discard, nil)
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			j.retain(body)
		}
	})
	b.Run("itemwise-same", func(b *testing.B) {
		j := New(io.Discard, nil)
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			j.retainBody(body, false)
		}
	})
	b.Run("itemwise-same-scanned", func(b *testing.B) {
		j := New(io.Discard, nil)
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			j.retainBody(body, true)
		}
	})
	b.Run("itemwise-next-turn", func(b *testing.B) {
		j := New(io.Discard, nil)
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			j.retainBody(prev, false)
			j.retainBody(body, false)
		}
	})
}
