package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/promptloom/promptloom/explain"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
)

// payloadFlags are verify's --payload and --provider.
type payloadFlags struct{ payload, provider *string }

func addPayloadFlags(fs *flag.FlagSet) payloadFlags {
	return payloadFlags{
		payload:  fs.String("payload", "", "verify the system channel of a provider request body against MANIFEST"),
		provider: fs.String("provider", "auto", "the body's shape: auto, anthropic, openai-chat, openai-responses or gemini"),
	}
}

// verifyPayload holds the system channel of a request body to a manifest:
// exit 0 when it holds (directly or through placement), 1 naming the first
// fragment that differs, 2 for a body with no system channel or a
// malformed one.
func (e *env) verifyPayload(pos []string, f payloadFlags) int {
	if len(pos) != 1 {
		return e.fail("verify --payload: takes MANIFEST alone, got %d argument(s)", len(pos))
	}
	prov, err := payload.ParseProvider(*f.provider)
	if err != nil {
		return e.fail("verify: --provider: %v", err)
	}
	m, err := e.readManifest(pos[0])
	if err != nil {
		return e.fail("verify: %v", err)
	}
	body, err := e.readLimited(*f.payload, maxPayloadBytes)
	if err != nil {
		return e.fail("verify: %v", err)
	}
	req, err := payload.Read(body, prov)
	var egress *manifest.Manifest
	if err == nil {
		egress, err = req.Verify(m)
	}
	switch {
	case errors.Is(err, payload.ErrMismatch):
		return e.failRule(err)
	case err != nil:
		return e.fail("verify: %s: %v", *f.payload, err)
	}
	hash, err := m.ContentHash()
	if err != nil {
		return e.fail("verify: %s: %v", pos[0], err)
	}
	c, _ := req.System() // Verify read it
	head := fmt.Sprintf("ok: manifest content hash %s holds for the %s system channel (%s, %d piece(s))",
		hash, c.Provider, c.Field, len(c.Pieces))
	if egress.WholePromptDigest == m.WholePromptDigest { // not placed
		fmt.Fprintf(e.stdout, "%s: %d bytes (%d segments, %d included)\n", head, len(c.Text), len(m.Segments), m.IncludedCount())
		return ExitOK
	}
	h, err := egress.ContentHash()
	if err != nil {
		return e.fail("verify: %v", err)
	}
	d := egress.EgressDelta
	fmt.Fprintf(e.stdout, "%s once its pieces are joined with the separator: %d bytes sent (%d added, %d removed); egress manifest %s accounts for them with %s\n",
		head, d.OutputSystemPromptBytes, d.BytesAdded, d.BytesRemoved, h, "egress:system")
	return ExitOK
}

// placeFlags are explain's --since and --max-breakpoints.
type placeFlags struct {
	since *string
	max   *int
}

func addPlaceFlags(fs *flag.FlagSet) placeFlags {
	return placeFlags{
		since: fs.String("since", "", "the previous call's manifest (or, with --lint, its options file, or with --bindings its bindings file): with --lint, warn about templated fragments whose bindings changed since; with --format payload:anthropic, breakpoints at boundaries unchanged since"),
		max:   fs.Int("max-breakpoints", -1, "with --format payload:anthropic, at most this many cache breakpoints (default the provider's limit, 4)"),
	}
}

func (f placeFlags) set() bool { return *f.since != "" || *f.max >= 0 }

// payloadFormats are explain's payload:PROVIDER formats.
func payloadFormats() []string {
	var out []string
	for _, p := range []payload.Provider{payload.Anthropic, payload.OpenAIChat, payload.OpenAIResponses, payload.Gemini} {
		out = append(out, "payload:"+string(p))
	}
	return out
}

func payloadFormat(format string) (payload.Provider, bool) {
	name, ok := strings.CutPrefix(format, "payload:")
	if !ok {
		return "", false
	}
	p, err := payload.ParseProvider(name)
	return p, err == nil && p != payload.Auto
}

// writePayload prints the provider's system field for the explanation's
// prompt; for Anthropic, each cache breakpoint and warning goes to stderr.
func (e *env) writePayload(x *explain.Explanation, p payload.Provider, f placeFlags) int {
	if p != payload.Anthropic && f.set() {
		return e.fail("explain: --since and --max-breakpoints apply to --format payload:anthropic only")
	}
	var opts payload.PlaceOptions
	switch {
	case *f.max == 0:
		opts.MaxBreakpoints = -1 // none
	case *f.max > 0:
		opts.MaxBreakpoints = *f.max
	}
	if *f.since != "" {
		old, err := e.readManifest(*f.since)
		if err != nil {
			return e.fail("explain: --since: %v", err)
		}
		opts.Since = old
	}
	body, pl, err := payload.Field(x.Reduction, p, &opts)
	if err != nil {
		return e.fail("explain: %v", err)
	}
	e.stdout.Write(append(body, '\n'))
	if pl == nil {
		return ExitOK
	}
	for i, b := range pl.Breakpoints {
		fmt.Fprintf(e.stderr, "promptloom: cache: breakpoint %d on block %d after %s (byte %d, %s): %s\n",
			i+1, b.Block, b.After, b.Offset, b.Kind, b.Reason)
	}
	for _, b := range pl.Dropped {
		fmt.Fprintf(e.stderr, "promptloom: cache: over the limit, not placed: after %s (byte %d, %s)\n", b.After, b.Offset, b.Kind)
	}
	if pl.None != "" {
		fmt.Fprintf(e.stderr, "promptloom: cache: no breakpoint: %s\n", pl.None)
	}
	for _, w := range pl.Warnings {
		fmt.Fprintln(e.stderr, "promptloom: cache: warning: "+w.Message)
	}
	return ExitOK
}
