package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/transport"
)

// An SDK's HTTP client wrapped: every call it makes is checked against
// the prompt on its context and journaled.
func Example() {
	j := journal.New(os.Stdout, nil)
	defer j.Close()
	client := &http.Client{Transport: transport.New(nil, j, nil)}
	ctx := transport.With(context.Background(), &transport.Call{Name: "turn-1"})
	_ = ctx // give ctx to the SDK's call, and client to the SDK
	fmt.Println(client.Transport != nil)
	// Output: true
}
