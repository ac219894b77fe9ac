package transport

import (
	"net/url"
	"testing"
)

// server.port is the URL's port, or its scheme's default.
func TestServerPort(t *testing.T) {
	for raw, want := range map[string]int{
		"https://api.anthropic.com/v1/messages": 443,
		"http://localhost/v1/messages":          80,
		"http://127.0.0.1:8080/v1/messages":     8080,
		"unix:///run/gateway.sock":              0,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := serverPort(u); got != want {
			t.Errorf("%s: port %d, want %d", raw, got, want)
		}
	}
}
