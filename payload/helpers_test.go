package payload

import "github.com/promptloom/promptloom/manifest"

// result is what Verify proved about a body, as the tests read it.
type result struct {
	Channel     *Channel
	Manifest    *manifest.Manifest
	Placed      bool
	Transformed bool
}

// verifyBody reads body as p and verifies it: Read, then Verify.
func verifyBody(m *manifest.Manifest, body []byte, p Provider) (*result, error) {
	r, err := Read(body, p)
	if err != nil {
		return nil, err
	}
	e, err := r.Verify(m)
	if err != nil {
		return nil, err
	}
	c, _ := r.System()
	placed := e.WholePromptDigest != m.WholePromptDigest
	return &result{Channel: c, Manifest: e, Placed: placed, Transformed: e.EgressDelta != nil && placed}, nil
}
