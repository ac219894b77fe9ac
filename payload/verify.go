package payload

import (
	"errors"
	"fmt"
	"strings"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
)

// Verify holds the request's system channel to m and returns the
// manifest that holds for the bytes sent, at the llm_request_payload_egress
// boundary: m projected with manifest.Manifest.ForEgress, the manifest a harness
// retains at send time. m must hold for the channel's text
// (manifest.Validate), or for its pieces (blocks, parts, messages) joined
// with the reducer's separator when the provider's rule joins them
// otherwise: a placement. Then every assembled row is "superseded by system
// transform", one egress:system row accounts for the bytes sent, and
// egress_delta records both sides, so a placement is told by the digest:
// the result's WholePromptDigest is not m's. Anything else is an *Error of
// kind ErrMismatch naming the first fragment that differs and where; a
// body with no channel is System's error. A harness reads the body it is
// about to send (Read) and calls Verify on it.
func (r *Request) Verify(m *manifest.Manifest) (*manifest.Manifest, error) {
	c, err := r.System()
	if err != nil {
		return nil, err
	}
	return verifyChannel(m, c)
}

// verifyChannel is Verify of a channel already extracted.
func verifyChannel(m *manifest.Manifest, c *Channel) (*manifest.Manifest, error) {
	verr := manifest.Validate(m, c.Text)
	placed := false
	var joined string
	if verr != nil && len(c.Pieces) > 1 {
		joined = strings.Join(c.Pieces, promptloom.Separator)
		placed = joined != c.Text && manifest.Validate(m, joined) == nil
		if placed {
			if e := cutInside(m, c.Pieces); e != nil {
				return nil, &Error{Kind: ErrMismatch, Provider: c.Provider, Fragment: e.ID, Offset: int64(e.Offset), rule: e}
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
		return nil, &Error{Kind: ErrMismatch, Provider: c.Provider, Fragment: frag, Offset: int64(off), rule: verr}
	}
	e, err := m.ForEgress(c.Text)
	if err != nil {
		return nil, &Error{Kind: ErrMismatch, Provider: c.Provider, rule: err}
	}
	return e, nil
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
