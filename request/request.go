// Package request accounts for a whole provider request, as the provider
// reads, caches and bills it: every tool definition, every block of the
// system channel and every content block of the messages, in the
// provider's cache order, each with its place in the body (an RFC 6901
// pointer), its bytes, its BLAKE3 digest after redaction, its tokens and
// its cache mark. That accounting is the request manifest
// (promptloom.request_manifest.v1), the whole-request sibling of Harn's
// context manifest, which accounts for the system string alone.
//
// FromPayload builds one from a body payload has read; given the system
// prompt's context manifest too, the system channel's segments are its
// fragments. Diverge finds
// where one request leaves another's prefix: the cache's view of a
// change. Package cache holds the providers' cache rules over these
// manifests.
package request

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"
)

// schema names the request manifest's format.
const schema = "promptloom.request_manifest.v1"

// Manifest is a whole request's accounting: its segments in cache order,
// its totals and its own content hash. Its JSON (MarshalJSON) is
// promptloom.request_manifest.v1, which also gives the totals per
// section.
type Manifest struct {
	Provider string
	Model    string
	// Counter names what Tokens count: a tokenizer ("o200k_base") where
	// the provider's is public, or "estimate" (a token every four bytes)
	// where it is not.
	Counter  string
	Segments []Segment
	// Cache is what the request asks of the provider's cache beyond the
	// marks on its segments (the zero value when it asks nothing), and
	// the body's other top-level members, which can change what a cache
	// renders (Settings: tool_choice, thinking, …; not in the JSON).
	Cache payload.Cache
	// Bytes and Tokens are the request's, the sums of its segments'.
	Bytes  int
	Tokens int
	// ContentHash is the BLAKE3 of the manifest's canonical JSON without
	// this member.
	ContentHash string
}

// Segment is one unit of the request: a tool definition, a system block
// (or, attributed, one fragment of the system prompt), a message block.
// Its Part is the block as payload reads it (section, path, role, type,
// name, cache breakpoint and raw JSON); a fragment of an attributed
// system block has the block's section, path, role, type and breakpoint
// (the last fragment of the block carries it), and no raw JSON of its own.
type Segment struct {
	payload.Part
	// Fragment and Reason are set on an attributed system segment: the
	// fragment of the context manifest it is, and why it is included.
	Fragment string
	Reason   string
	// Bytes is what the body sends for the segment.
	Bytes int
	// Digest is the BLAKE3 of the segment's canonical JSON after Harn's
	// redact_json, without its cache mark (a fragment's: the context
	// manifest's digest), so a body as sent and the same body as a
	// transcript retained it agree, and a breakpoint that moves changes no
	// digest: a provider keys its cache on the content, not on the marks.
	Digest digest.Digest
	Tokens int

	text   string // what was counted, for a diff: text, or a JSON string token when quoted
	quoted bool
	tmpl   *promptloom.Template
}

// Options configure FromPayload. Nil is the default.
type Options struct {
	// Counter counts tokens; nil picks the provider's own where it is
	// public (o200k_base for OpenAI's current models) and an estimate
	// elsewhere.
	Counter budget.Counter
	// Model names the model when the body does not: Gemini's is in the
	// URL, and payload.Route reads it from the URL's path.
	Model string
	// System is the context manifest of the system prompt the body
	// sends: its fragments become the system segments. The body's system
	// channel must hold to it (payload's rules), or FromPayload fails.
	System *manifest.Manifest
}

// ErrNotAttributed is returned by FromPayload when Options.System does not
// hold for the body's system channel.
var ErrNotAttributed = errors.New("request: the system manifest does not hold for the body's system channel")

// FromPayload builds the request manifest of a body payload.Read has read
// (payload.Read(body, payload.Auto) detects its provider; a body it cannot
// read is its *payload.Error): the body is read once, and the same view
// serves the gate, the journal and this manifest.
func FromPayload(r *payload.Request, o *Options) (*Manifest, error) {
	if o == nil {
		o = &Options{}
	}
	parts, err := r.Parts()
	if err != nil {
		return nil, err
	}
	c, err := r.Cache()
	if err != nil {
		return nil, err
	}
	count, name := counterFor(r, o)
	if o.Model != "" && r.Model == "" && o.Counter == nil {
		if enc := openAIEncoding(r.Provider, o.Model); enc != "" {
			if c, err := budget.NewCounter(enc); err == nil {
				count, name = c.Count, enc
			}
		}
	}
	model := r.Model
	if model == "" {
		model = o.Model
	}
	m := &Manifest{Provider: string(r.Provider), Model: model, Counter: name, Cache: c}
	var frags []Segment
	if o.System != nil {
		if frags, err = attribute(r, parts, o.System, count); err != nil {
			return nil, err
		}
	}
	m.Segments = make([]Segment, 0, len(parts)+len(frags))
	attributed := false
	w := blockWriter{mark: wire.MarkKey(string(r.Provider))}
	for _, p := range parts {
		if p.Section == "system" && frags != nil {
			if !attributed {
				m.Segments = append(m.Segments, frags...)
				attributed = true
			}
			continue
		}
		red, err := w.digestInput(p)
		if err != nil {
			// A block with no canonical form (a lone surrogate) is a
			// malformed body, as payload says of any other.
			return nil, &payload.Error{Kind: payload.ErrMalformed, Provider: r.Provider,
				Path: strings.ReplaceAll(strings.TrimPrefix(p.Path, "/"), "/", "."), Msg: err.Error()}
		}
		text, quoted := w.countedText(p)
		tokens := 0
		switch {
		case !quoted:
			// A block that is not text is counted as its canonical JSON,
			// the digest's input: how the body spaces it is not what
			// the provider renders, and a transcript keeps it canonical.
			tokens = count(unsafe.String(unsafe.SliceData(red), len(red)))
		case name == "estimate":
			tokens = (unquotedLen(redactedText(red, text)) + 3) / 4 // estimate's rule, without decoding
		default:
			tokens = count(pjson.Unquote(redactedText(red, text)))
		}
		m.Segments = append(m.Segments, Segment{Part: p, Bytes: len(p.Raw), Digest: digest.Bytes(red), Tokens: tokens, text: text, quoted: quoted})
	}
	m.total()
	m.ContentHash, err = m.hash()
	return m, err
}

// redactedText is a text part's text as its tokens are counted: redacted,
// as the digest's input red holds it (its string, or its text member),
// so a body as sent and the transcript's redacted copy of it count alike
// and every command gives one call one figure. raw, the text as sent, is
// what is left when red holds no text.
func redactedText(red []byte, raw string) string {
	s := unsafe.String(unsafe.SliceData(red), len(red))
	if s != "" && s[0] == '"' {
		return s
	}
	if v, ok := field(s, "text"); ok && v != "" && v[0] == '"' {
		return v
	}
	return raw
}

// unquotedLen is the length of a JSON string token's text, decoded. The
// runs between escapes are found with a vectorised search: text is most
// of a body, and an escape is rare in it.
func unquotedLen(tok string) int {
	n := 0
	for i := 1; i < len(tok)-1; i++ {
		if tok[i] != '\\' {
			j := strings.IndexByte(tok[i:len(tok)-1], '\\')
			if j < 0 {
				return n + len(tok) - 1 - i
			}
			n += j
			i += j
		}
		i++
		if i < len(tok)-1 && tok[i] == 'u' {
			r := 0
			if i+4 < len(tok) {
				for _, c := range tok[i+1 : i+5] {
					r <<= 4
					switch {
					case c >= '0' && c <= '9':
						r |= int(c - '0')
					case c >= 'a' && c <= 'f':
						r |= int(c-'a') + 10
					case c >= 'A' && c <= 'F':
						r |= int(c-'A') + 10
					}
				}
			}
			switch {
			case r < 0x80:
				n++
			case r < 0x800:
				n += 2
			case r >= 0xd800 && r < 0xdc00 && i+10 < len(tok) && tok[i+5] == '\\' && tok[i+6] == 'u' &&
				(tok[i+7] == 'd' || tok[i+7] == 'D') && strings.ContainsRune("cdefCDEF", rune(tok[i+8])):
				n += 4 // a surrogate pair: one 4-byte character
				i += 6
			case r >= 0xd800 && r < 0xe000:
				n += 3 // half a pair alone: U+FFFD
			default:
				n += 3
			}
			i += 4
			continue
		}
		n++
	}
	return n
}

// counted is the segment's counted text, decoded.
func (s *Segment) counted() string {
	if s.quoted {
		return pjson.Unquote(s.text)
	}
	return s.text
}

// field is the raw value of a member of a JSON object (the first); an
// array, whose items have no key, has none.
func field(obj, key string) (string, bool) {
	if obj == "" || obj[0] != '{' {
		return "", false
	}
	it := pjson.NewIter(obj)
	for {
		k, _, v, _, ok := it.Next()
		if !ok {
			return "", false
		}
		if pjson.Unquote(k) == key {
			return v, true
		}
	}
}

// counterFor picks the counter and its name.
func counterFor(r *payload.Request, o *Options) (func(string) int, string) {
	if o.Counter != nil {
		return o.Counter.Count, o.Counter.Encoding()
	}
	if enc := openAIEncoding(r.Provider, r.Model); enc != "" {
		if c, err := budget.NewCounter(enc); err == nil {
			return c.Count, enc
		}
	}
	return estimate, "estimate"
}

// estimate is the estimate of a text's tokens where the provider's
// tokenizer is not public: a token every four bytes, rounded up. Package
// cache scales it to the totals providers report.
func estimate(s string) int { return (len(s) + 3) / 4 }

// openAIEncoding is the public tokenizer of an OpenAI model ("" for
// another provider or a model whose tokenizer is not known).
func openAIEncoding(p payload.Provider, model string) string {
	if p != payload.OpenAIChat && p != payload.OpenAIResponses {
		return ""
	}
	switch m := strings.ToLower(model); {
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-4.5"),
		strings.HasPrefix(m, "gpt-5"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"),
		strings.HasPrefix(m, "chatgpt-4o"), strings.HasPrefix(m, "gpt-oss"):
		return "o200k_base"
	case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"):
		return "cl100k_base"
	}
	return ""
}

// attribute cuts the system channel into the fragments of sys, each with
// the path of the block it starts in.
func attribute(r *payload.Request, parts []payload.Part, sys *manifest.Manifest, count func(string) int) ([]Segment, error) {
	egress, err := r.Verify(sys)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotAttributed, err)
	}
	c, _ := r.System() // Verify read it
	var blocks []payload.Part
	for _, p := range parts {
		if p.Section == "system" {
			blocks = append(blocks, p)
		}
	}
	pieces := c.Pieces
	prompt := c.Text
	if egress.WholePromptDigest != sys.WholePromptDigest { // placed
		prompt = strings.Join(pieces, "\n\n")
	}
	if len(pieces) != len(blocks) {
		return nil, fmt.Errorf("%w: %d system pieces in %d blocks", ErrNotAttributed, len(pieces), len(blocks))
	}
	// Where each block starts in the prompt: pieces follow one another,
	// joined by nothing or by the two-byte separator.
	starts := make([]int, len(pieces))
	at := 0
	for i, piece := range pieces {
		switch {
		case strings.HasPrefix(prompt[at:], piece):
		case strings.HasPrefix(prompt[at:], "\n\n"+piece):
			at += 2
		default:
			return nil, fmt.Errorf("%w: block %s is not where the prompt has it", ErrNotAttributed, blocks[i].Path)
		}
		starts[i] = at
		at += len(piece)
	}
	var out []Segment
	b := 0
	for off, s := range sys.Layout() {
		for b+1 < len(starts) && starts[b+1] <= off {
			b++
		}
		if off+s.Bytes > len(prompt) {
			return nil, fmt.Errorf("%w: fragment %s ends past the prompt", ErrNotAttributed, s.ID)
		}
		text := prompt[off : off+s.Bytes]
		blk := blocks[b]
		out = append(out, Segment{Part: payload.Part{Section: "system", Path: blk.Path, Role: blk.Role, Type: blk.Type},
			Fragment: s.ID, Reason: s.Reason, Bytes: s.Bytes, Digest: s.Digest, Tokens: count(text), text: text, tmpl: s.Template})
	}
	// A block's breakpoint goes on its last fragment.
	for i := range out {
		if i+1 == len(out) || out[i+1].Path != out[i].Path {
			for _, blk := range blocks {
				if blk.Path == out[i].Path {
					out[i].Cache = blk.Cache
				}
			}
		}
	}
	return out, nil
}

// total sums the segments into the manifest's Bytes and Tokens.
func (m *Manifest) total() {
	m.Bytes, m.Tokens = 0, 0
	for _, s := range m.Segments {
		m.Bytes += s.Bytes
		m.Tokens += s.Tokens
	}
}

// section is one section's share of the request, as the JSON gives it.
type section struct {
	Section  string `json:"section"`
	Segments int    `json:"segments"`
	Bytes    int    `json:"bytes"`
	Tokens   int    `json:"tokens"`
}

// sections are the shares of tools, system and messages, in that order.
func (m *Manifest) sections() []section {
	out := []section{{Section: "tools"}, {Section: "system"}, {Section: "messages"}}
	for _, s := range m.Segments {
		for i := range out {
			if out[i].Section == s.Section {
				out[i].Segments++
				out[i].Bytes += s.Bytes
				out[i].Tokens += s.Tokens
			}
		}
	}
	return out
}

func (m *Manifest) hash() (string, error) {
	h := m.ContentHash
	m.ContentHash = ""
	defer func() { m.ContentHash = h }()
	b, err := m.canonical()
	if err != nil {
		return "", err
	}
	return digest.Bytes(b).String(), nil
}

// canonical is the manifest's canonical JSON (content_hash as it stands),
// in a buffer sized for it at once: a segment takes about 200 bytes.
func (m *Manifest) canonical() ([]byte, error) {
	return m.appendCanonical(make([]byte, 0, 256+256*len(m.Segments))), nil
}

// withoutMark is a part's JSON without its cache mark, the member named
// mark.
func withoutMark(p payload.Part, mark string) []byte {
	if p.Cache == nil || mark == "" {
		return p.Raw
	}
	return pjson.Without(string(p.Raw), mark)
}
