package payload

import (
	"errors"
	"fmt"
	"strings"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
)

// Result is what Verify proved about one request body.
type Result struct {
	// Channel is the system channel read from the body.
	Channel *Channel
	// Manifest holds for Channel.Text at the llm_request_payload_egress
	// boundary: the manifest given, projected with manifest.ForEgress. When
	// the bytes are the manifest's prompt only the boundary changes; when
	// placement changed them (Placed), every assembled row is "superseded by
	// system transform", one egress:system row accounts for the bytes sent,
	// and egress_delta records both sides. This is the manifest a harness
	// retains at send time.
	Manifest *manifest.Manifest
	// Transformed reports that the bytes sent are not the manifest's
	// prompt, so Manifest has the egress:system row.
	Transformed bool
	// Placed reports that the bytes differ from the manifest's prompt only
	// by placement: the channel's pieces (blocks, parts, messages) joined
	// with the reducer's separator are the prompt, but the provider's rule
	// joins them otherwise.
	Placed bool
}

// Verify holds the system channel of a request body to m: the body is read
// with Extract (p may be Auto), and m must hold for the channel's text
// (manifest.Validate), or for its pieces joined with the separator, in
// which case the result is Placed. Otherwise the error is an *Error of
// kind ErrMismatch naming the first fragment that differs and where. A harness
// calls Verify on the body it is about to send.
func Verify(m *manifest.Manifest, body []byte, p Provider) (*Result, error) {
	c, err := Extract(body, p)
	if err != nil {
		return nil, err
	}
	return verifyChannel(m, c)
}

// Verify holds the request's system channel to m, as Verify does a body,
// without reading the body again.
func (r *Request) Verify(m *manifest.Manifest) (*Result, error) {
	c, err := r.System()
	if err != nil {
		return nil, err
	}
	return verifyChannel(m, c)
}

// verifyChannel is Verify of a channel already extracted.
func verifyChannel(m *manifest.Manifest, c *Channel) (*Result, error) {
	verr := manifest.Validate(m, c.Text)
	placed := false
	var joined string
	if verr != nil && len(c.Pieces) > 1 {
		joined = strings.Join(c.Pieces, promptloom.Separator)
		placed = joined != c.Text && manifest.Validate(m, joined) == nil
		if placed {
			if e := cutInside(m, c.Pieces); e != nil {
				return nil, &Error{Kind: ErrMismatch, Provider: c.Provider, Fragment: e.ID, Offset: int64(e.Offset), Err: e}
			}
		}
	}
	if verr != nil && !placed {
		frag, off := locate(m, c.Text)
		if joined != "" && joined != c.Text {
			// The pieces may have been meant to join with the separator:
			// report the reading that agrees with the manifest longer.
			if f2, o2 := locate(m, joined); o2 > off {
				frag, off = f2, o2
			}
		}
		// Validate reports the whole digest first, as Harn does; the rule
		// that names where the bytes differ says more here.
		var whole *manifest.RuleError
		if errors.As(verr, &whole) && whole.Located != nil {
			verr = whole.Located
		}
		return nil, &Error{Kind: ErrMismatch, Provider: c.Provider, Fragment: frag, Offset: int64(off), Err: verr}
	}
	e, err := m.ForEgress(c.Text)
	if err != nil {
		return nil, &Error{Kind: ErrMismatch, Provider: c.Provider, Err: err}
	}
	return &Result{Channel: c, Manifest: e, Transformed: placed, Placed: placed}, nil
}

// locate walks m's included segments over s and returns the first whose
// bytes (or the separator before them) do not match, with the offset where
// it starts; "" and the end of the last segment when every segment matches.
func locate(m *manifest.Manifest, s string) (string, int) {
	off := 0
	for at, seg := range m.Layout() {
		if at > off {
			if !strings.HasPrefix(s[off:], promptloom.Separator) {
				return seg.ID, off
			}
			off += len(promptloom.Separator)
		}
		end := off + seg.Bytes
		if seg.Bytes < 0 || end > len(s) || digest.Of(s[off:end]) != seg.Digest {
			return seg.ID, off
		}
		off = end
	}
	return "", off
}

// cutInside is the rule a placement breaks when a cut between two pieces
// falls inside a fragment (at a paragraph break of its own, whose
// separator the provider's rule then drops), nil when every cut is at a
// boundary between two included fragments: a placement holds each
// fragment whole in one block, part or message. The pieces joined with
// the separator are known to be the manifest's prompt.
func cutInside(m *manifest.Manifest, pieces []string) *manifest.RuleError {
	ends := map[int]bool{} // where a separator between two included fragments starts
	type span struct {
		id         string
		start, end int
	}
	var spans []span
	for at, s := range m.Layout() {
		if len(spans) > 0 {
			ends[at-len(promptloom.Separator)] = true
		}
		spans = append(spans, span{s.ID, at, at + s.Bytes})
	}
	pos := 0
	for i, p := range pieces[:len(pieces)-1] {
		pos += len(p)
		if !ends[pos] {
			id := ""
			for _, sp := range spans {
				if sp.start <= pos && pos <= sp.end {
					id = sp.id
					break
				}
			}
			return &manifest.RuleError{Rule: "placement", ID: id, Offset: pos, Detail: fmt.Sprintf(
				"piece %d of the system channel ends inside fragment `%s` (byte %d of the prompt), and the separator there is dropped: a placement holds each fragment whole in one block, part or message", i, id, pos)}
		}
		pos += len(promptloom.Separator)
	}
	return nil
}
