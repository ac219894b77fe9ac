package transport_test

import (
	"testing"
	"time"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
)

func digestOfJSON(s string) digest.Digest {
	b, err := redact.JSON([]byte(s))
	if err != nil {
		panic(err)
	}
	return digest.Bytes(b)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("timed out")
}
