package proxy_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/internal/testkit/fakeprovider"
	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/proxy"
	"github.com/promptloom/promptloom/transcript"
)

// An SDK's retry through the proxy is a request of its own, recorded as
// its own call: named by the harness (Promptloom-Call), the 429 and the
// retry are read back as one logical call; named by the proxy (SESSION/N),
// as two.
func TestARetryThroughTheProxy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		header  []option.RequestOption
		logical int
	}{
		{"named", []option.RequestOption{option.WithHeader("Promptloom-Call", "turn-1")}, 1},
		{"unnamed", nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := fakeprovider.New(fakeprovider.Reply{Status: 429, Header: fakeprovider.RetryAfter(time.Millisecond)}, fakeprovider.Reply{})
			defer up.Close()
			path := filepath.Join(t.TempDir(), "proxy.jsonl")
			o := &proxy.Options{Open: func(session string) (*journal.Journal, error) {
				return journal.Open(path, &journal.Options{Session: session})
			}}
			o.Upstream, _ = url.Parse(up.URL)
			p, err := proxy.New(o)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(p)
			client := anthropic.NewClient(append([]option.RequestOption{option.WithBaseURL(srv.URL), option.WithAPIKey("k")}, tc.header...)...)
			_, err = client.Messages.New(context.Background(), anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 10,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Where is main?"))}})
			if err != nil {
				t.Fatal(err)
			}
			srv.Close()
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := transcript.Verify(bytes.NewReader(data), nil)
			if err != nil || !rep.OK() || len(rep.Calls) != 2 {
				t.Fatalf("verify: %v, %+v", err, rep)
			}
			rs, err := cache.FromTranscript(data, rep)
			if err != nil {
				t.Fatal(err)
			}
			if g := cache.Logical(rs); len(g) != tc.logical {
				t.Errorf("logical calls %v, want %d", g, tc.logical)
			}
		})
	}
}
