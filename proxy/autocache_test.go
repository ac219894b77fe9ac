package proxy_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/proxy"
)

// stripMarks is an agent's body as a client that never heard of the
// prompt cache sends it: no cache_control anywhere.
func stripMarks(t *testing.T, body []byte) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(unmarked(v))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A 200-call agent session from a client that sets no cache marker,
// against an upstream that caches by Anthropic's documented rules: sent
// as it came, nothing is cached; under --cache auto the share of input
// tokens the provider reports read from its cache is at least 90%. The
// transcript verifies and keeps each body as sent, the proxy keeps the
// digest of each as received and says where it placed the breakpoints,
// and the body sent differs from the one received in its marks alone.
func TestAutoCacheAgentSession(t *testing.T) {
	share := map[bool]float64{}
	for _, auto := range []bool{false, true} {
		// Sent as it came, no call is cached whatever their number: 20
		// show it.
		calls := 20
		if auto {
			calls = 200
		}
		up := newDiagnosing(t)
		g := newOneSession(t, up.srv.URL, proxy.Options{AutoCache: auto})
		a := fakecache.NewAgent()
		var bodies [][]byte
		read, total := 0, 0
		for i := range calls {
			if i > 0 {
				a.Answer(fmt.Sprintf("Done with step %d; the tests pass.", i))
			}
			body := stripMarks(t, a.Turn(fmt.Sprintf("Step %d: look at file %d and fix what is wrong in it.", i+1, i)))
			if strings.Contains(string(body), "cache_control") {
				t.Fatal("the client marks its cache")
			}
			bodies = append(bodies, body)
			u := g.send(t, body)
			read += u.Read
			total += u.Input + u.Read + u.Write
		}
		share[auto] = float64(read) / float64(total)

		got := up.arrivals()
		changes := proxy.Changes(g.p)
		for i, r := range got {
			var sent, received map[string]any
			if err := json.Unmarshal(r.body, &sent); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(bodies[i], &received); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(unmarked(sent), unmarked(received)) {
				t.Fatalf("auto %v, call %d: more than marks changed:\n%s\n%s", auto, i+1, bodies[i], r.body)
			}
			c := changes[i]
			changed := c != [2]string{}
			if !auto {
				if string(r.body) != string(bodies[i]) || changed {
					t.Fatalf("call %d: changed without --cache auto: %q", i+1, c)
				}
				continue
			}
			want := fmt.Sprintf("placed cache breakpoints (--cache auto) at /tools/11, /system/2, /messages/%d/content/0", 2*i)
			if !changed || c[0] != digest.Bytes(bodies[i]).String() || c[1] != want || r.length != int64(len(r.body)) {
				t.Fatalf("call %d: the change recorded is %q (%t), want the received body's digest and %q", i+1, c, changed, want)
			}
		}

		// The transcript verifies, with every body as it was sent.
		rs := g.closeAndRead(t)
		if len(rs) != calls {
			t.Fatalf("%d calls in the transcript, want %d", len(rs), calls)
		}
		for i, r := range rs {
			var kept, sent any
			if err := json.Unmarshal(r.Body, &kept); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got[i].body, &sent); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(kept, sent) {
				t.Fatalf("auto %v, call %d: the transcript keeps\n%s\nbut sent\n%s", auto, i+1, r.Body, got[i].body)
			}
		}
	}
	t.Logf("share of input read from the cache: %.1f%% as sent, %.1f%% over 200 calls under --cache auto", 100*share[false], 100*share[true])
	if share[false] != 0 || share[true] < 0.9 {
		t.Errorf("cached share %.3f as sent, %.3f under --cache auto: want 0 and at least 0.9", share[false], share[true])
	}
}
