package transcript

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/manifest"
)

// checkReceipts checks a request's served_context against the lines
// retained before it: manifest_content_hash must name a retained
// context_manifest whose bytes re-derive it, system_prompt_content_hash a
// retained system_prompt whose content re-derives it and equals the
// manifest's whole_prompt_digest, system_prompt_bytes the byte count, and
// the manifest must validate against the content. In a promptloom
// transcript every part of the request it retains (messages, tools,
// parameters) must have its receipt hash and match it; in a Harn transcript
// tool_schemas_content_hash must name retained tool_schemas, and when the
// served_message definitions of the message lineage are retained, they
// must rebuild the messages that messages_content_hash names. The payload
// receipt, when there is one, is checked by checkPayload.
// manifestRead is what one retained context_manifest line gave when a
// call first cited it: an error when its bytes do not hash to its
// content_hash (hashErr) or do not read as a manifest (readErr), else the
// manifest. Each line is hashed and read once, however many calls and
// system prompts cite it.
type manifestRead struct {
	mf               *manifest.Manifest
	hashErr, readErr *manifest.RuleError
}

// holdKey names a retained manifest line and the exact bytes of a system
// prompt (their BLAKE3, unredacted: two prompts whose secrets differ share
// a content hash, not these): whether the one holds for the other depends
// on nothing else, so a prompt retained again on another line shares the
// verdict.
type holdKey struct {
	manifestLine int
	prompt       digest.Digest
}

// sysCheck is what hashing a retained system prompt line found: whether
// it re-derives the content hash it is retained under, and the BLAKE3 of
// its exact bytes.
type sysCheck struct {
	ok    bool
	exact digest.Digest
}

// holdVerdict is the verdict of holding a manifest to a system prompt:
// nil, the rule manifest.Validate (or, for a Harn prompt that redaction
// changed, validateRedacted) reports, or with placeholders set, that
// redaction placeholders do not account for the difference in length.
type holdVerdict struct {
	err          error
	placeholders bool
}

// callFailed is a rule a call breaks; its detail reads "call does not
// verify: ...".
func callFailed(rule manifest.Rule, format string, args ...any) *manifest.RuleError {
	return &manifest.RuleError{Rule: rule, Offset: -1, Detail: "call does not verify: " + fmt.Sprintf(format, args...)}
}

// held is a call whose retained manifest does not hold for its retained
// prompt: the manifest's own rule (err, from manifest.Validate), said of
// the lines.
func held(err error, format string, args ...any) *manifest.RuleError {
	e := callFailed(RuleManifest, format, args...)
	var re *manifest.RuleError
	if errors.As(err, &re) {
		e.Rule, e.ID, e.Offset, e.Want, e.Got, e.Located = re.Rule, re.ID, re.Offset, re.Want, re.Got, re.Located
	}
	return e
}

// readManifest hashes and reads a retained manifest line, once.
func (v *verifier) readManifest(m retained, mhash string, harn bool) manifestRead {
	if r, done := v.reads[m.line]; done {
		return r
	}
	var r manifestRead
	switch {
	case !harn && !m.hashed, harn && !rederives(m.raw, mhash):
		r.hashErr = callFailed(RuleContentHash, "the context_manifest at line %d does not hash to its content_hash (it hashes to %s)", m.line, digest.String(m.raw).String())
	default:
		// Read only reads its argument (and copies what it keeps), so the
		// retained string's bytes are lent to it rather than copied.
		mf, err := manifest.Read(unsafe.Slice(unsafe.StringData(m.raw), len(m.raw)))
		if err != nil {
			r.readErr = callFailed(RuleManifest, "the context_manifest at line %d: %v", m.line, err)
		} else {
			r.mf = mf
		}
	}
	v.reads[m.line] = r
	// The verdict is all a later citation needs: the line's bytes can go
	// (the manifest read keeps its own copy).
	if cur, ok := v.manifests[mhash]; ok && cur.line == m.line {
		v.manifests[mhash] = retained{line: m.line}
	}
	return r
}

// systemHashes reports whether a retained system prompt line re-derives
// the content hash it is retained under, hashing each line once.
func (v *verifier) systemHashes(sys retained, shash string) bool {
	c, done := v.sysHashed[sys.line]
	if !done {
		c = sysCheck{ok: digest.Of(sys.raw).String() == shash, exact: digest.String(sys.raw)}
		v.sysHashed[sys.line] = c
	}
	return c.ok
}

// hold holds a manifest read from line mline to a system prompt, once per
// manifest line and prompt content.
// A prompt retained with placeholders may stand for at most
// maxRedactedGrowth times its bytes, plus maxRedactedSlack, as sent.
const (
	maxRedactedGrowth = 64
	maxRedactedSlack  = 1 << 20
)

func (v *verifier) hold(mline int, mf *manifest.Manifest, sys retained) holdVerdict {
	k := holdKey{mline, v.sysHashed[sys.line].exact} // systemHashes ran
	if h, done := v.holds[k]; done {
		return h
	}
	var h holdVerdict
	// A writer redacts a line before writing it (Harn's always, ours unless
	// KeepRaw): when that changed the retained prompt's length, its hash
	// still re-derives (redaction is a fixed point) but segment offsets
	// refer to the bytes sent, not retained. Only redaction may explain the difference: each placeholder
	// <redacted:NAME:LEN> stands for LEN bytes sent, and they must add up.
	// Every other rule is still checked (validateRedacted).
	switch sent, n := sentBytes(sys.raw); {
	case len(sys.raw) == mf.SystemPromptBytes:
		h.err = manifest.Validate(mf, sys.raw)
	case n == 0 || sent != mf.SystemPromptBytes:
		h.placeholders = true
	case sent > maxRedactedGrowth*len(sys.raw)+maxRedactedSlack:
		// The placeholders' lengths come from the file: checking them
		// means laying out the prompt as sent, so they may not claim
		// more than secrets can be (a PEM key is about 60 times its
		// placeholder), or a small line would take gigabytes.
		h.err = &manifest.RuleError{Rule: RuleRedactedLength, Offset: -1, Want: "at most " + strconv.Itoa(maxRedactedGrowth*len(sys.raw)+maxRedactedSlack),
			Got: strconv.Itoa(sent), Detail: fmt.Sprintf("the redaction placeholders of a %d-byte prompt claim %d bytes sent, more than secrets can be", len(sys.raw), sent)}
	default:
		h.err = validateRedacted(mf, sys.raw)
	}
	v.holds[k] = h
	return h
}

func (v *verifier) checkReceipts(l getter, harn bool, c *CallReport) *manifest.RuleError {
	s := v.served.index(l.Get("served_context"))
	if !s.IsObject() {
		return callFailed(RuleReceipt, "no served_context")
	}
	if schema := s.Get("schema").String(); schema != chain.ServedContextSchema {
		return callFailed(RuleReceipt, "served_context schema %q", schema)
	}
	mhash, rerr := receiptHash(s, "manifest_content_hash")
	if rerr != nil {
		return rerr
	}
	m, ok := v.manifests[mhash]
	if !ok {
		return callFailed(RuleRetained, "no retained context_manifest has content_hash %s", mhash)
	}
	c.ManifestLine = m.line
	shash, rerr := receiptHash(s, "system_prompt_content_hash")
	if rerr != nil {
		return rerr
	}
	sys, haveSys := v.systems[shash]
	if haveSys {
		c.SystemLine, c.SystemBytes, c.System = sys.line, len(sys.raw), sys.raw
	}
	// What depends only on the retained lines (their hashes, the manifest
	// read, the manifest held to the prompt) is worked out once per line,
	// and once per manifest line and prompt content: the lines are written
	// only when they change, so most calls share it, and however the
	// calls pair the lines the work stays linear in the file.
	r := v.readManifest(m, mhash, harn)
	switch {
	case r.hashErr != nil:
		return r.hashErr
	case !haveSys:
		return callFailed(RuleRetained, "no retained system_prompt has content_hash %s", shash)
	case !v.systemHashes(sys, shash):
		return callFailed(RuleContentHash, "the system_prompt at line %d does not hash to its content_hash (it hashes to %s)", sys.line, digest.Of(sys.raw))
	case r.readErr != nil:
		return r.readErr
	}
	mf := r.mf
	c.Manifest = mf
	if mf.WholePromptDigest.String() != shash {
		return callFailed(RuleWholePromptDigest, "system_prompt_content_hash is not the manifest's whole_prompt_digest %s", mf.WholePromptDigest)
	}
	got := s.Get("system_prompt_bytes")
	if n, ok := intField(got); !ok || n != int64(mf.SystemPromptBytes) {
		return callFailed(RuleWholePromptDigest, "system_prompt_bytes %s, but the manifest at line %d says %d", orRawNull(got.Raw), m.line, mf.SystemPromptBytes)
	}
	switch h := v.hold(m.line, mf, sys); {
	case h.placeholders:
		return callFailed(RuleRedactedLength, "the system prompt at line %d is %d bytes, the manifest at line %d says %d, and its redaction placeholders do not account for the difference", sys.line, len(sys.raw), m.line, mf.SystemPromptBytes)
	case h.err != nil:
		return held(h.err, "the manifest at line %d does not hold for the system prompt at line %d: %v", m.line, sys.line, h.err)
	}
	if harn {
		return v.checkHarnParts(s)
	}
	// The writer retains the whole request: messages, tools and parameters
	// (null when there are none). Each must be there, and each key of the
	// request, these and any a later version adds, must hash to its
	// <key>_content_hash: nothing in it goes unchecked.
	req := v.req.index(l.Get("request"))
	if !req.IsObject() {
		return callFailed(RuleRequest, "no request object")
	}
	for _, field := range []string{"messages", "tools", "parameters"} {
		if !req.Get(field).Exists() {
			return callFailed(RuleRequest, "request.%s is missing (the writer always retains it, null when there is none)", field)
		}
	}
	for k, raw := range req.m.All() {
		want, herr := receiptHash(s, receiptField(k))
		if herr != nil {
			herr.Detail += fmt.Sprintf(" (request.%s is retained)", k)
			return herr
		}
		if !rederives(raw, want) {
			return callFailed(RuleRequestContent, "request.%s does not hash to %s_content_hash", k, k)
		}
	}
	return checkPayload(s, req, sys, mf, shash)
}

// receiptField is the served context's member that holds the hash of the
// request's member k: <k>_content_hash.
func receiptField(k string) string {
	switch k { // the members every request has, named without a concatenation
	case "messages":
		return "messages_content_hash"
	case "tools":
		return "tools_content_hash"
	case "parameters":
		return "parameters_content_hash"
	}
	return k + "_content_hash"
}

// receiptHash reads a required blake3:<hex> hash of a receipt.
func receiptHash(s getter, field string) (string, *manifest.RuleError) {
	h := s.Get(field)
	if h.Type != jString {
		return "", callFailed(RuleReceipt, "served_context has no %s", field)
	}
	if _, err := digest.Parse(h.Str); err != nil {
		return "", callFailed(RuleReceipt, "served_context.%s: %v", field, err)
	}
	return h.Str, nil
}

// rederives reports whether a retained JSON value hashes to want: over its
// exact bytes (a Harn line is the serde_json encoding of the redacted
// event, so a value's bytes in it are what its hash was taken over), or
// over its canonical, redacted encoding (as Harn's own tests re-derive).
func rederives(raw, want string) bool {
	if d, err := digest.Parse(want); err == nil && digest.String(raw) == d {
		return true
	}
	h, err := chain.JSONHash([]byte(raw))
	return err == nil && h == want
}

// rederivesLine is rederives for a retained line's value and the hash it
// is retained under, worked out once a line: tool schemas and served
// messages are retained once and cited by every call after.
func (v *verifier) rederivesLine(r retained, hash string) bool {
	ok, done := v.rederived[r.line]
	if !done {
		ok = rederives(r.raw, hash)
		v.rederived[r.line] = ok
	}
	return ok
}

func (v *verifier) checkHarnParts(s getter) *manifest.RuleError {
	if s.Get("tool_schemas_content_hash").Exists() {
		h, rerr := receiptHash(s, "tool_schemas_content_hash")
		if rerr != nil {
			return rerr
		}
		ts, ok := v.schemas[h]
		switch {
		case !ok:
			return callFailed(RuleRetained, "no retained tool_schemas has content_hash %s", h)
		case !v.rederivesLine(ts, h):
			return callFailed(RuleContentHash, "the tool_schemas at line %d do not hash to their content_hash", ts.line)
		}
	}
	lineage := s.Get("message_lineage.messages")
	if !lineage.IsArray() {
		return nil
	}
	var parts []string
	missing := ""
	lineage.ForEach(func(_, m value) bool {
		ref := m.Get("definition_ref").String()
		d, ok := v.messages[ref]
		if !ok {
			missing = ref
			return true
		}
		if !v.rederivesLine(d, ref) {
			missing = ref + " (its served_message does not hash to it)"
		}
		parts = append(parts, d.raw)
		return true
	})
	switch {
	case len(parts) == 0 && missing != "":
		return nil // the transcript does not retain messages: nothing to check
	case missing != "":
		return callFailed(RuleRetained, "message_lineage names %s, which no served_message retains", missing)
	}
	want, rerr := receiptHash(s, "messages_content_hash")
	if rerr != nil {
		rerr.Detail += " (the messages are retained)"
		return rerr
	}
	if !rederives("["+strings.Join(parts, ",")+"]", want) {
		return callFailed(RuleRequestContent, "the retained messages do not hash to messages_content_hash")
	}
	return nil
}

// harnLine reads one event of a Harn transcript.
func (v *verifier) harnLine(n int, l value) {
	typ := l.Get("type")
	if typ.Type != jString {
		v.rep.broke(RuleKind, n, "line %d: a Harn event with no type (a promptloom line in a Harn transcript?)", n)
		return
	}
	hash := strings.Clone(l.Get("content_hash").String()) // a key outlives its line
	switch typ.Str {
	case chain.KindSystemPrompt:
		v.retainSystem(n, hash, l.Get("content").String())
	case chain.KindContextManifest:
		v.manifests[hash] = retained{line: n, raw: l.Get("manifest").Raw}
	case "tool_schemas":
		v.schemas[hash] = retained{line: n, raw: l.Get("schemas").Raw}
	case "served_message":
		v.messages[hash] = retained{line: n, raw: l.Get("message").Raw}
	case chain.KindRequest:
		c := CallReport{Line: n, Seq: l.Get("iteration").Int(), Call: strings.Clone(l.Get("call_id").String()), Status: verified}
		if err := v.checkReceipts(l, true, &c); err != nil {
			c.Status, c.Problem = failed, err
		}
		v.addCall(c)
	}
}
