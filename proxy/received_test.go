package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/proxy"
	"github.com/promptloom/promptloom/transcript"
)

// Under --cache auto both bodies of each call are on the record: the body
// sent, and the body received with the change the proxy made to it
// (request.received). The transcript verifies, reads both back, and
// fails once the received part is altered.
func TestAutoCacheKeepsBothBodies(t *testing.T) {
	up := newDiagnosing(t)
	g := newThrough(t, up.srv.URL, proxy.Options{AutoCache: true})
	a := fakecache.NewAgent()
	var bodies [][]byte
	for i := range 6 {
		if i > 0 {
			a.Answer(fmt.Sprintf("Done with step %d.", i))
		}
		body := stripMarks(t, a.Turn(fmt.Sprintf("Step %d: fix file %d.", i+1, i)))
		bodies = append(bodies, body)
		g.send(t, body)
	}
	g.closeAndRead(t)
	data, err := os.ReadFile(g.path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := transcript.Verify(bytes.NewReader(data), nil)
	if err != nil || !rep.OK() || rep.Changed != len(bodies) {
		t.Fatalf("verify: %v, %d changed", err, rep.Changed)
	}
	sent, err := transcript.Requests(data, rep)
	if err != nil {
		t.Fatal(err)
	}
	arrived := up.arrivals()
	for i, s := range sent {
		var received, in, out, kept any
		_ = json.Unmarshal(s.Received, &received)
		_ = json.Unmarshal(bodies[i], &in)
		_ = json.Unmarshal(arrived[i].body, &out)
		_ = json.Unmarshal(s.Body, &kept)
		if !reflect.DeepEqual(received, in) || !reflect.DeepEqual(kept, out) || reflect.DeepEqual(received, kept) {
			t.Errorf("call %d: the transcript keeps received %.100s and sent %.100s", i+1, s.Received, s.Body)
		}
		if !strings.HasPrefix(s.Changed, "placed cache breakpoints (--cache auto) at ") {
			t.Errorf("call %d: the change is %q", i+1, s.Changed)
		}
	}
	// A piece stored in front of the last call's received body.
	last := regexp.MustCompile(`(?m)^.*"provider_call_request".*$`).FindAll(data, -1)
	line := last[len(last)-1]
	edited := regexp.MustCompile(`("received":\{.*"body_segments":\[)`).ReplaceAll(bytes.Clone(line), []byte(`${1}"{}",`))
	if bytes.Equal(edited, line) {
		t.Fatal("the last request keeps no received segments")
	}
	if rep, err := transcript.Verify(bytes.NewReader(bytes.Replace(data, line, edited, 1)), nil); err == nil && rep.OK() {
		t.Error("a transcript whose received body is altered verifies")
	}
}
