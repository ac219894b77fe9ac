// Package draft is what every event store does alike to a batch before it
// writes it: check and encode the payloads, keep its own copy of each
// audience, write an audience as JSON, and pick the clock that stamps the
// events. Memory (in eventlog) and the drivers (eventlog/sqlite,
// eventlog/postgres) share it, so that a batch refused by one store is
// refused by every store with the same error.
package draft

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrInvalid is a batch that no store writes: a draft without a kind, or
// whose payload is not JSON. eventlog exports it as ErrInvalidDraft; it is
// declared here because eventlog imports this package.
var ErrInvalid = errors.New("invalid event draft")

// Draft is the shape of eventlog.Draft. This package cannot import eventlog
// (eventlog imports it, for Memory), so its functions take any type with
// exactly eventlog.Draft's fields, and the compiler holds the two to one
// shape.
type Draft interface {
	~struct {
		Kind     string
		Actor    string
		Audience []string
		Payload  any
	}
}

// fields is a Draft's value, whatever its named type.
type fields = struct {
	Kind     string
	Actor    string
	Audience []string
	Payload  any
}

// Marshal checks and encodes the drafts' payloads before anything is
// written: a draft without a kind, or whose payload does not marshal (or,
// given as a json.RawMessage, is not valid JSON), fails the whole batch.
// A json.RawMessage is kept as its bytes, not re-encoded.
func Marshal[D Draft](drafts []D) ([][]byte, error) {
	out := make([][]byte, len(drafts))
	for i, dd := range drafts {
		d := fields(dd)
		if d.Kind == "" {
			return nil, fmt.Errorf("draft %d: %w: the kind is empty", i, ErrInvalid)
		}
		var err error
		if raw, ok := d.Payload.(json.RawMessage); ok {
			if !json.Valid(raw) {
				return nil, fmt.Errorf("draft %d (%s): %w: the payload is not valid JSON", i, d.Kind, ErrInvalid)
			}
			out[i] = raw
			continue
		}
		if out[i], err = json.Marshal(d.Payload); err != nil {
			return nil, fmt.Errorf("draft %d (%s): %w: the payload does not marshal to JSON: %v", i, d.Kind, ErrInvalid, err)
		}
	}
	return out, nil
}

// Audience is a draft's audience as a store keeps it: a copy of its own
// (the caller may change the draft's slice afterwards), nil when empty,
// as every store reads it back.
func Audience(aud []string) []string {
	if len(aud) == 0 {
		return nil
	}
	return slices.Clone(aud)
}

// AudienceJSON is an audience as the durable stores write it: a JSON list,
// [] when empty.
func AudienceJSON(aud []string) string {
	if aud == nil {
		aud = []string{}
	}
	b, _ := json.Marshal(aud)
	return string(b)
}

// Clock is the clock a store stamps events with: clock, or the time of day
// in UTC when clock is nil (the zero eventlog.Options).
func Clock(clock func() time.Time) func() time.Time {
	if clock != nil {
		return clock
	}
	return func() time.Time { return time.Now().UTC() }
}
