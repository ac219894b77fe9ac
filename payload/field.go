package payload

import (
	"github.com/promptloom/promptloom"
	pjson "github.com/promptloom/promptloom/internal/json"
)

// Field builds a provider's system field for a reduction's prompt: a JSON
// object holding only that field, to merge into a request body (or to
// unmarshal into an SDK's own types). Read reads each back as the prompt,
// byte for byte.
//
//   - Anthropic: {"system": [blocks]}, with cache_control breakpoints at
//     fragment boundaries: the first after the longest run of
//     unconditional before fragments from the start (a fragment that is
//     gated, in the after bucket, excluded with a body, or sheddable by a
//     budget ends the run); with o.Since, one at the end of the fragments
//     unchanged since the previous manifest and, within that, one before
//     each gated fragment, latest first; at most o.MaxBreakpoints. No
//     block is empty, and no breakpoint ends at byte 0. The placement,
//     where the breakpoints are and why, is returned too.
//   - OpenAIChat: {"messages": [{"role": "system", "content": prompt}]}.
//   - OpenAIResponses: {"instructions": prompt}.
//   - Gemini: {"systemInstruction": {"parts": [{"text": prompt}]}}.
//
// An absent prompt is {} (no system field) for every provider; a present
// but empty one (an empty replacement root) has no empty block or part,
// which Anthropic and Gemini refuse: Anthropic's is no blocks, Gemini's an
// instruction of no parts (OpenAI's channels are plain strings). OpenAI
// caches a prompt this short field holds without markers (its markers go on
// content blocks, and the system channel here is a string) and Gemini
// through a separate cache resource, so only Anthropic gets breakpoints.
func Field(r *promptloom.Reduction, p Provider, o *PlaceOptions) ([]byte, *Placement, error) {
	var v any = struct{}{}
	var pl *Placement
	switch p {
	case Anthropic:
		pl = placement(r, o)
		if r.Present {
			v = struct {
				System []block `json:"system"`
			}{pl.blocks}
		}
	case OpenAIChat:
		if r.Present {
			type message struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			}
			v = struct {
				Messages []message `json:"messages"`
			}{[]message{{"system", r.System}}}
		}
	case OpenAIResponses:
		if r.Present {
			v = struct {
				Instructions string `json:"instructions"`
			}{r.System}
		}
	case Gemini:
		if r.Present {
			type part struct {
				Text string `json:"text"`
			}
			type content struct {
				Parts []part `json:"parts"`
			}
			// Gemini refuses an empty text part: an empty prompt is
			// an instruction of no parts.
			c := content{Parts: []part{}}
			if r.System != "" {
				c.Parts = []part{{r.System}}
			}
			v = struct {
				SystemInstruction content `json:"systemInstruction"`
			}{c}
		}
	default:
		return nil, nil, &Error{Kind: ErrUnknownProvider, Msg: string(p)}
	}
	b, err := pjson.MarshalRaw(v)
	if err != nil {
		return nil, nil, err
	}
	return b, pl, nil
}
