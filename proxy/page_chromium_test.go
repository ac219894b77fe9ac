package proxy_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/promptloom/promptloom/internal/testkit/chromiumtest"
	"github.com/promptloom/promptloom/internal/testkit/fakecache"
)

// The live page in Chromium: the calls made before it loaded are its rows,
// and a call made once it is connected arrives by its events and becomes
// a row, by the page's own script.
func TestLivePageInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	g := newRig(t, nil)
	a := fakecache.NewAgent()
	g.post(t, "/v1/messages", a.Turn("hi"))
	var once sync.Once
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/promptloom/events" {
			g.p.ServeHTTP(w, r)
			return
		}
		first := false
		once.Do(func() { first = true })
		if !first {
			// A reconnection: 204 tells an EventSource to stop, so the
			// browser goes idle and its virtual time runs out.
			w.WriteHeader(http.StatusNoContent)
			return
		}
		// The page has connected: make a call it must show, and end the
		// stream once its event is written.
		go func() {
			resp, err := http.Post(g.srv.URL+"/v1/messages", "application/json", bytes.NewReader(fakecache.NewAgent().Turn("a live one")))
			if err == nil {
				resp.Body.Close()
			}
		}()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		g.p.ServeHTTP(&untilEvent{ResponseWriter: w, done: cancel, want: `"seq":2`}, r.WithContext(ctx))
	}))
	defer live.Close()
	dom := string(chromiumtest.RunURL(t, bin, live.URL+"/promptloom/", "--dump-dom", "--virtual-time-budget=10000"))
	if !strings.Contains(dom, `id="call-1"`) || !strings.Contains(dom, `id="call-2"`) {
		t.Fatalf("the page does not show both calls:\n%s", dom)
	}
}

// untilEvent ends an event stream (done) once an event holding want, done
// and flushed, has gone out.
type untilEvent struct {
	http.ResponseWriter
	done func()
	want string
	seen bool
}

func (u *untilEvent) Write(p []byte) (int, error) {
	u.seen = u.seen || strings.Contains(string(p), u.want)
	return u.ResponseWriter.Write(p)
}

func (u *untilEvent) Flush() {
	u.ResponseWriter.(http.Flusher).Flush()
	if u.seen {
		u.done()
	}
}
