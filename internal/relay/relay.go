// Package relay carries what a proxy hands the transport about one
// request beside the harness's transport.Call: the body it read already,
// the body as it came when the proxy changed it, and a callback for each
// attempt's outcome. A harness calling through an SDK has none of these,
// so they are not part of the transport's API.
package relay

import (
	"context"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
)

// Call is the proxy's part of one request.
type Call struct {
	// Payload is the request body as payload.Read read it: the transport
	// takes it instead of parsing the body again, and its bytes instead of
	// a copy of the body, when they are the body's (compared as the body
	// is read).
	Payload *payload.Request
	// Received and Changed are journal.Request's: the body as it came,
	// when the proxy changed it before sending it (--diagnostics, --cache
	// auto), and how.
	Received []byte
	Changed  string
	// Done, when set, is called with each attempt's outcome as it was
	// recorded, once an attempt: the response, or the error.
	Done func(journal.Response, error)
}

type key struct{}

// With returns ctx carrying c.
func With(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// From is the Call ctx carries, nil when none.
func From(ctx context.Context) *Call {
	c, _ := ctx.Value(key{}).(*Call)
	return c
}
