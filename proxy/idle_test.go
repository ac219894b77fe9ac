package proxy_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"
	"github.com/promptloom/promptloom/transcript"
	"golang.org/x/mod/sumdb/note"
)

// kinds are the kind and session of each line of a transcript.
func kinds(t *testing.T, data []byte) [][2]string {
	t.Helper()
	var out [][2]string
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var v struct{ Kind, Session string }
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		out = append(out, [2]string{v.Kind, v.Session})
	}
	return out
}

// A session idle for Options.Idle is closed and checkpointed while the
// proxy runs; the call that continues it (by its header, or by prefix
// continuity) opens ID~1, which names it, and the transcript verifies
// with the signer's key.
func TestAnIdleSessionIsClosedAndFollowed(t *testing.T) {
	for _, byHeader := range []bool{true, false} {
		skey, vkey, _ := note.GenerateKey(rand.Reader, "proxy.example")
		signer, _ := note.NewSigner(skey)
		verifier, _ := note.NewVerifier(vkey)
		up := fakeprovider.New()
		defer up.Close()
		path := filepath.Join(t.TempDir(), "run.jsonl")
		open := func(session, follows string) (*journal.Journal, error) {
			return journal.Open(path, &journal.Options{Session: session, Follows: follows, Signer: signer})
		}
		u, _ := url.Parse(up.URL)
		// An hour: the sweeper's own ticks find nothing idle; the test
		// moves the clock with Sweep.
		p, err := proxy.New(&proxy.Options{Upstream: u, Idle: time.Hour, Follow: open,
			Open: func(s string) (*journal.Journal, error) { return open(s, "") }})
		if err != nil {
			t.Fatal(err)
		}
		g := &rig{up: up, p: p, path: path}
		g.srv = httptest.NewServer(p)
		var headers []string
		if byHeader {
			headers = []string{"Promptloom-Session", "old"}
		}
		a := fakecache.NewAgent()
		for range 2 {
			if code, out := g.post(t, "/v1/messages", a.Turn(strings.Repeat("Next. ", 40)), headers...); code != 200 {
				t.Fatalf("%d %s", code, out)
			}
			a.Answer("ok")
		}
		if err := proxy.Sweep(p, time.Now().Add(59*time.Minute)); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		if k := kinds(t, data); k[len(k)-1][0] == "journal_checkpoint" {
			t.Fatalf("closed before it was idle for Options.Idle: %v", k)
		}
		if err := proxy.Sweep(p, time.Now().Add(61*time.Minute)); err != nil {
			t.Fatal(err)
		}
		data, _ = os.ReadFile(path)
		k := kinds(t, data)
		old := k[0][1]
		if byHeader && old != "old" {
			t.Fatalf("the session is %q", old)
		}
		if got := k[len(k)-2:]; got[0] != [2]string{"journal_close", old} || got[1] != [2]string{"journal_checkpoint", old} {
			t.Fatalf("the idle session ends in %v", got)
		}
		// While it is closed, the transcript verifies and is finished.
		if rep, err := transcript.Verify(bytes.NewReader(data), &transcript.Options{Verifier: verifier}); err != nil || !rep.OK() {
			t.Fatalf("after idling: %v %+v", err, rep)
		}
		if code, out := g.post(t, "/v1/messages", a.Turn("And again."), headers...); code != 200 {
			t.Fatalf("%d %s", code, out)
		}
		g.srv.Close()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		data, _ = os.ReadFile(path)
		rep, err := transcript.Verify(bytes.NewReader(data), &transcript.Options{Verifier: verifier})
		if err != nil || !rep.OK() {
			var w strings.Builder
			if rep != nil {
				rep.WriteText(&w)
			}
			t.Fatalf("header %v: verify: %v\n%s", byHeader, err, w.String())
		}
		var opened struct{ Session, Follows string }
		for _, l := range bytes.Split(data, []byte("\n")) {
			if bytes.Contains(l, []byte(`"journal_open"`)) && bytes.Contains(l, []byte(`"follows"`)) {
				_ = json.Unmarshal(l, &opened)
			}
		}
		if opened.Session != old+"~1" || opened.Follows != old {
			t.Errorf("header %v: the continuing call opened %+v, want %s~1 following %s", byHeader, opened, old, old)
		}
		if len(rep.Calls) != 3 || rep.Calls[2].Call != old+"~1/1" {
			t.Errorf("header %v: calls %+v", byHeader, rep.Calls)
		}
	}
}

// Idle is refused when negative, or without the Follow that opens the
// session a later call continues.
func TestIdleNeedsFollow(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:1")
	open := func(string) (*journal.Journal, error) { return nil, nil }
	follow := func(string, string) (*journal.Journal, error) { return nil, nil }
	for _, o := range []*proxy.Options{
		{Upstream: u, Open: open, Idle: -time.Second, Follow: follow},
		{Upstream: u, Open: open, Idle: time.Minute},
	} {
		if p, err := proxy.New(o); err == nil || !strings.Contains(err.Error(), "Options.Idle") {
			if p != nil {
				p.Close()
			}
			t.Errorf("idle %s, follow %v: %v", o.Idle, o.Follow != nil, err)
		}
	}
}
