package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptloom/promptloom/internal/testkit/fakecache"
	"github.com/promptloom/promptloom/proxy"
)

// The pages watching share each row an event sends: twenty pages open do
// not encode it twenty times (each did, and with a call's plot that took
// a core from the calls). Each page still gets the row, its verdict and
// its session's plot, as valid JSON.
func TestPagesWatchingShareEachRow(t *testing.T) {
	const pages = 20
	g := newRig(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang fails

	defer cancel()
	var streams []*bufio.Reader
	for range pages {
		req, _ := http.NewRequestWithContext(ctx, "GET", g.srv.URL+"/promptloom/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		if _, err := r.ReadString('\n'); err != nil { // the comment that opens the stream
			t.Fatal(err)
		}
		streams = append(streams, r)
	}
	before := proxy.RowsEncoded()
	if code, out := g.post(t, "/v1/messages", fakecache.NewAgent().Turn("hello"), "Promptloom-Session", "s"); code != 200 {
		t.Fatal(code, out)
	}
	// Every page, until it has the call's row answered.
	var wg sync.WaitGroup
	errs := make(chan string, pages)
	for _, r := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					errs <- err.Error()
					return
				}
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok {
					continue
				}
				var ev struct {
					Seq                int
					Status, HTML, Plot string
				}
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					errs <- "an event is not JSON: " + err.Error() + ": " + data
					return
				}
				if ev.Seq != 1 || !strings.Contains(ev.HTML, `id="call-1"`) {
					errs <- "an event: " + data
					return
				}
				if ev.Plot != "" && !strings.Contains(ev.Plot, "<svg") {
					errs <- "an event's plot: " + data
					return
				}
				if strings.HasPrefix(ev.Status, "ok") {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if n := proxy.RowsEncoded() - before; n >= pages {
		t.Errorf("the call's row was encoded %d times for %d pages: once a page, not once for all", n, pages)
	}
}
