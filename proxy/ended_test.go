package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"
)

// An upstream that answers a model call with 101
// Switching Protocols has the call recorded as failed, the client its
// 502, and the session closed whole when the proxy stops.
func TestAnUpstreamThatSwitchesProtocols(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		io.Copy(io.Discard, c)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	g := &rig{path: filepath.Join(t.TempDir(), "t.jsonl")}
	var err error
	g.p, err = proxy.New(&proxy.Options{Upstream: u, Open: func(s string) (*journal.Journal, error) {
		return journal.Open(g.path, &journal.Options{Session: s})
	}})
	if err != nil {
		t.Fatal(err)
	}
	g.srv = httptest.NewServer(g.p)
	code, out := g.post(t, "/v1/messages", unrelated)
	if code != http.StatusBadGateway || !strings.Contains(out, `"type":"error"`) {
		t.Errorf("the client got %d %s", code, out)
	}
	rep, data := g.closeAndVerify(t)
	if len(rep.Calls) != 1 || !strings.Contains(rep.Calls[0].Outcome, "101 Switching Protocols") || !strings.Contains(string(data), "journal_close") {
		t.Errorf("calls %+v\n%s", rep.Calls, data)
	}
}
