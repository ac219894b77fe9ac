package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"testing"
	"weak"

	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
)

// A call pushed off the page is let go, body and all:
// neither its session (its latest request, the array behind its calls)
// nor the page's list keeps it.
func TestAnEvictedCallIsLetGo(t *testing.T) {
	defer func(n int) { keepCalls = n }(keepCalls)
	keepCalls = 2
	up := fakeprovider.New()
	defer up.Close()
	u, _ := url.Parse(up.URL)
	path := filepath.Join(t.TempDir(), "t.jsonl")
	p, err := New(&Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		return journal.Open(path, &journal.Options{Session: s})
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer func() { srv.Close(); p.Close() }()
	post := func(session, text string) {
		t.Helper()
		body := fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":%q}]}`, text)
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", bytes.NewReader([]byte(body)))
		if session != "" {
			req.Header.Set(SessionHeader, session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// One call in a named session, one in a session found by continuity;
	// then enough calls elsewhere to push both off the page.
	post("named", "the first named call")
	post("", "the first unnamed call")
	p.mu.Lock()
	first, second := weak.Make(p.calls[0]), weak.Make(p.calls[1])
	firstBody, secondBody := weak.Make(p.calls[0].pr), weak.Make(p.calls[1].pr)
	p.mu.Unlock()
	for i := range 3 {
		post("other", fmt.Sprintf("call %d", i))
	}
	for range 3 {
		runtime.GC()
	}
	for what, gone := range map[string]bool{
		"the named session's call":   first.Value() == nil,
		"its body":                   firstBody.Value() == nil,
		"the unnamed session's call": second.Value() == nil,
		"the unnamed session's body": secondBody.Value() == nil,
	} {
		if !gone {
			t.Errorf("%s is still in memory after it left the page", what)
		}
	}
	// The conversation found by continuity still goes on in its session.
	p.mu.Lock()
	before := len(p.order)
	p.mu.Unlock()
	req := `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"the first unnamed call"},{"role":"assistant","content":"ok"},{"role":"user","content":"more"}]}`
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader([]byte(req)))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	p.mu.Lock()
	after := len(p.order)
	p.mu.Unlock()
	if after != before {
		t.Errorf("the unnamed conversation's next turn opened a new session (%d sessions, then %d)", before, after)
	}
}
