package manifest

import (
	"github.com/promptloom/promptloom/digest"
)

// Egress names the row and producer of a system transform at the provider
// boundary.
const (
	egressRowID      = "egress:system"
	egressProducer   = "llm_request_payload"
	egressReason     = "provider capability and system-placement normalization"
	reasonSuperseded = "superseded by system transform"
)

// ForEgress projects the manifest onto the exact system bytes sent to the
// provider, which an adapter may have changed (moved system text into a
// message, added its own). The projection's boundary is
// llm_request_payload_egress. When the bytes differ from the assembled
// prompt, every included row becomes excluded ("superseded by system
// transform"), one included row egress:system accounts for the bytes sent,
// the root becomes transformed, and egress_delta records both sides. The
// result is validated against sent; m is not changed.
func (m *Manifest) ForEgress(sent string) (*Manifest, error) {
	out := *m
	out.Segments = append([]Segment(nil), m.Segments...)
	out.Boundary = boundaryEgress
	d := digest.Of(sent)
	if d != m.WholePromptDigest || m.SystemPromptBytes != len(sent) {
		for i := range out.Segments {
			if out.Segments[i].Included {
				out.Segments[i].Included, out.Segments[i].Bytes, out.Segments[i].Reason = false, 0, reasonSuperseded
			}
		}
		if sent != "" {
			out.Segments = append(out.Segments, Segment{ID: egressRowID, Producer: egressProducer, Bucket: "before",
				Included: true, Reason: egressReason, Bytes: len(sent), Digest: d})
		}
		out.EgressDelta = &EgressDelta{
			Producer:                 egressProducer,
			InputSystemPromptDigest:  m.WholePromptDigest,
			InputSystemPromptBytes:   m.SystemPromptBytes,
			OutputSystemPromptDigest: d,
			OutputSystemPromptBytes:  len(sent),
			BytesAdded:               max(0, len(sent)-m.SystemPromptBytes),
			BytesRemoved:             max(0, m.SystemPromptBytes-len(sent)),
		}
		out.Root = RootTransformed
		out.WholePromptDigest, out.SystemPromptBytes = d, len(sent)
		out.JoinSeparatorCount = 0
		// a budget's count was of the assembled prompt, not of these bytes
		out.SystemPromptTokens = nil
	}
	if err := Validate(&out, sent); err != nil {
		return nil, err
	}
	return &out, nil
}
