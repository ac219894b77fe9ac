package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"

	"github.com/tidwall/gjson"
)

// ErrUnreadable matches every error of Read.
var ErrUnreadable = errors.New("unreadable manifest")

// ReadError says which field of a manifest could not be read.
type ReadError struct {
	// Field is the JSON path of the field, e.g. "segments[0].digest"; ""
	// for the manifest as a whole.
	Field string
	// detail is what is wrong with it.
	detail string
	kind   error // promptloom.ErrTooLarge or nil
}

// Error names the field that could not be read.
func (e *ReadError) Error() string {
	if e.Field == "" {
		return "manifest: " + e.detail
	}
	return "manifest: " + e.Field + ": " + e.detail
}

// Is makes ReadError match ErrUnreadable (and promptloom.ErrTooLarge for
// input over promptloom.DefaultMaxBytes).
func (e *ReadError) Is(t error) bool { return t == ErrUnreadable || (e.kind != nil && t == e.kind) }

// Read reads a manifest written by promptloom or by another tool. It is
// tolerant where tolerance cannot hide a wrong prompt: unknown fields are
// ignored, either boundary (llm_request_payload_egress or the older
// observed_llm_call_pre_egress) is accepted, a segment may name its producer
// "source". It is strict where a field is needed to check the bytes: the
// schema, every segment's id, included, bytes and digest, the whole-prompt
// digest and byte count. A key given twice anywhere is an error naming its
// path: readers disagree on which copy counts (encoding/json, jq and
// JavaScript take the last, others the first), so promptloom takes neither. Absent scope, messages, join_separator,
// join_separator_bytes and join_separator_count read as the values they can
// only have (the count from the included segments); present, they are kept
// as written, for Validate to judge. Its strings and actor chain are
// redacted as New and SetActorChain redact them.
func Read(data []byte) (*Manifest, error) {
	if len(data) > promptloom.DefaultMaxBytes {
		return nil, &ReadError{detail: fmt.Sprintf("%d bytes, over the limit of %d", len(data), promptloom.DefaultMaxBytes), kind: promptloom.ErrTooLarge}
	}
	// One pass of the JSON reader checks everything before a field is
	// read: UTF-8, the syntax, a repeated key (gjson would quietly take the
	// first copy) and a number or string with no canonical form. It also
	// finds the top level's members and where each segment ends, so no
	// later walk looks for them again.
	//
	// The document is read where it lies, not copied: every string the
	// manifest keeps is a copy of its own (kept), so the manifest holds
	// its values and not the document, which may be large (a transcript's
	// line) and is the caller's.
	text := unsafe.String(unsafe.SliceData(data), len(data))
	doc, err := pjson.Scan(text, nil)
	if err != nil {
		return nil, readError(err)
	}
	if v := gjson.Parse(text); !v.IsObject() {
		return nil, &ReadError{detail: "not a JSON object"}
	}
	kept := &keeper{}
	r := reader{m: new(pjson.Members), keep: kept}
	r.m.FromDoc(text, doc)
	// Another schema's fields mean other things: say so before judging them.
	if s := r.get("schema"); s.Type == gjson.String && s.Str != schema {
		return nil, &ReadError{Field: "schema", detail: fmt.Sprintf("is %q, want %q", s.Str, schema)}
	}
	m := &Manifest{
		Schema:             r.str("schema", true, ""),
		Scope:              r.str("scope", false, scope),
		Boundary:           r.str("boundary", false, boundaryPreEgress),
		Messages:           r.str("messages", false, messages),
		CallRole:           r.str("call_role", false, ""),
		ActorChain:         nullJSON,
		Root:               r.str("root", false, RootComposed),
		WholePromptDigest:  r.digest("whole_prompt_digest"),
		SystemPromptBytes:  r.count("system_prompt_bytes", true),
		JoinSeparator:      r.str("join_separator", false, joinSeparator),
		JoinSeparatorBytes: joinSeparatorBytes,
		TokenEncoding:      r.str("token_encoding", false, ""),
		SystemPromptTokens: r.optCount("system_prompt_tokens"),
		BudgetTotal:        r.optCount("budget_total"),
	}
	if n := r.optCount("join_separator_bytes"); n != nil {
		m.JoinSeparatorBytes = *n
	}
	sepCount := r.optCount("join_separator_count")
	if ac := r.get("actor_chain"); ac.Exists() {
		if err := m.SetActorChain(json.RawMessage(ac.Raw)); err != nil {
			return nil, &ReadError{Field: "actor_chain", detail: err.Error()}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	switch {
	case m.Schema != schema:
		return nil, &ReadError{Field: "schema", detail: fmt.Sprintf("is %q, want %q", m.Schema, schema)}
	case m.Boundary != boundaryPreEgress && m.Boundary != boundaryEgress:
		return nil, &ReadError{Field: "boundary", detail: fmt.Sprintf("unknown boundary %q", m.Boundary)}
	case m.JoinSeparator != joinSeparator:
		return nil, &ReadError{Field: "join_separator", detail: fmt.Sprintf("is %q; only %q is defined", m.JoinSeparator, joinSeparator)}
	}
	switch m.Root {
	case RootComposed, RootReplacement, RootTransformed:
	default:
		return nil, &ReadError{Field: "root", detail: fmt.Sprintf("unknown root %q", m.Root)}
	}
	segs := r.get("segments")
	if !segs.IsArray() {
		return nil, &ReadError{Field: "segments", detail: "missing or not a list"}
	}
	var list *pjson.Member
	for i := range doc.Members {
		if doc.Members[i].Key == "segments" {
			list = &doc.Members[i]
		}
	}
	m.Segments = make([]Segment, 0, list.Items) // one allocation, not a copy at each growth
	members := new(pjson.Members)               // one segment's, room reused by the next
	for i, it := 0, list.Iter(text); ; i++ {
		_, _, raw, _, ok := it.Next()
		if !ok {
			break
		}
		seg, err := readSegment(raw, i, kept, members)
		if err != nil {
			return nil, err
		}
		m.Segments = append(m.Segments, seg)
	}
	if sepCount != nil {
		m.JoinSeparatorCount = *sepCount
	} else {
		m.JoinSeparatorCount = max(m.IncludedCount()-1, 0)
	}
	if d := r.get("egress_delta"); d.Exists() && d.Type != gjson.Null {
		if err := json.Unmarshal([]byte(d.Raw), &m.EgressDelta); err != nil {
			return nil, &ReadError{Field: "egress_delta", detail: err.Error()}
		}
	}
	m.redactStrings()
	return m, nil
}

// readError is the ReadError for a document the JSON reader refused.
func readError(err error) *ReadError {
	var e *pjson.Error
	switch {
	case !errors.As(err, &e):
		return &ReadError{detail: err.Error()}
	case errors.Is(err, pjson.ErrInvalidUTF8):
		return &ReadError{detail: fmt.Sprintf("invalid UTF-8 at byte %d", e.Offset)}
	case errors.Is(err, pjson.ErrSyntax):
		return &ReadError{detail: "not valid JSON"}
	}
	return &ReadError{Field: e.Path, detail: fmt.Sprintf("%s (at byte %d)", e.Detail, e.Offset)}
}

// redactStrings redacts the strings of a manifest written elsewhere as New
// redacts its own, so that what Read returns (and verify prints) holds no
// secret a careless writer left in an id or call_role.
func (m *Manifest) redactStrings() {
	m.CallRole = redact.String(m.CallRole)
	// Producers, reasons and registers are the same few in every row.
	var memo redactMemo
	for i := range m.Segments {
		s := &m.Segments[i]
		s.ID, s.Producer, s.Reason = redact.String(s.ID), memo.of(s.Producer), memo.of(s.Reason)
		s.Register, s.Sources = memo.of(s.Register), redactAll(s.Sources)
		if t := s.Template; t != nil {
			s.Template = rowTemplate(t)
		}
	}
	if d := m.EgressDelta; d != nil {
		d.Producer = redact.String(d.Producer)
	}
}

func readSegment(raw string, i int, kept *keeper, members *pjson.Members) (Segment, error) {
	r := reader{m: members, seg: i + 1, keep: kept}
	if raw[0] != '{' {
		return Segment{}, &ReadError{Field: fmt.Sprintf("segments[%d]", i), detail: "not an object"}
	}
	members.Index(raw)
	seg := Segment{
		ID:       r.str("id", true, ""),
		Producer: r.str("producer", false, ""),
		Bucket:   r.str("bucket", false, ""),
		Included: r.boolean("included"),
		Reason:   r.str("reason", false, ""),
		Bytes:    r.count("bytes", true),
		Digest:   r.digest("digest"),
		Register: r.str("register", false, ""),
		Rank:     r.optInt("rank"),
		Tokens:   r.optCount("tokens"),
	}
	if seg.Producer == "" {
		seg.Producer = r.str("source", false, "")
	}
	if src := r.get("sources"); src.Exists() && src.Type != gjson.Null {
		if !src.IsArray() {
			return seg, &ReadError{Field: r.prefix() + "sources", detail: "not a list"}
		}
		src.ForEach(func(_, c gjson.Result) bool {
			seg.Sources = append(seg.Sources, kept.of(c.String()))
			return true
		})
	}
	if t := r.get("template"); r.err == nil && t.Exists() && t.Type != gjson.Null {
		var err error
		if seg.Template, err = readTemplate(t, r.prefix()+"template", kept); err != nil {
			return seg, err
		}
	}
	return seg, r.err
}

// readTemplate reads a segment's template member (promptloom's): an
// object with a digest, optional file, and objects of digests under
// includes and bindings. Its other members are ignored, as a segment's
// are.
func readTemplate(t gjson.Result, field string, kept *keeper) (*promptloom.Template, error) {
	if !t.IsObject() {
		return nil, &ReadError{Field: field, detail: "not an object"}
	}
	r := reader{m: new(pjson.Members), within: field + ".", keep: kept}
	r.m.Index(t.Raw)
	tp := &promptloom.Template{File: r.str("file", false, ""), Digest: r.digest("digest")}
	digests := func(key string, required bool) map[string]digest.Digest {
		v := t.Get(key)
		if !v.Exists() || v.Type == gjson.Null {
			if required {
				r.fail(key, "missing")
			}
			return nil
		}
		if !v.IsObject() {
			r.fail(key, "not an object")
			return nil
		}
		out := map[string]digest.Digest{}
		v.ForEach(func(k, d gjson.Result) bool {
			text := d.String()
			dg, err := digest.Parse(text)
			if d.Type != gjson.String || err != nil {
				r.fail(key+"."+k.String(), fmt.Sprintf("%q is not blake3:<64 lowercase hex digits>", d.Raw))
				return false
			}
			out[kept.of(k.String())] = dg
			return true
		})
		return out
	}
	tp.Includes = digests("includes", false)
	tp.Bindings = digests("bindings", true)
	if r.err != nil {
		return nil, r.err
	}
	return tp, nil
}

// reader reads fields of one object, keeping the first error.
type reader struct {
	m   *pjson.Members // the object's
	seg int            // 1 + the index of the segment read, 0 for the manifest
	// within, for an object inside a segment (its template), is that
	// object's path with a trailing dot.
	within string
	err    error
	keep   *keeper
}

// keeper copies the strings a manifest keeps out of the document it is
// read from, sharing one copy of each value that repeats (producers,
// buckets, reasons, registers: the same few in every row), up to a few
// thousand distinct values.
type keeper struct{ seen map[string]string }

func (k *keeper) of(s string) string {
	if s == "" {
		return ""
	}
	if c, ok := k.seen[s]; ok {
		return c
	}
	c := strings.Clone(s)
	if k.seen == nil {
		k.seen = make(map[string]string)
	}
	if len(k.seen) < 4096 {
		k.seen[c] = c
	}
	return c
}

// prefix is the path of the object read, for an error: built only then,
// not once a segment.
func (r *reader) prefix() string {
	if r.within != "" {
		return r.within
	}
	if r.seg == 0 {
		return ""
	}
	return fmt.Sprintf("segments[%d].", r.seg-1)
}

// get reads the member named key.
func (r *reader) get(key string) gjson.Result {
	raw, ok := r.m.Lookup(key)
	if !ok {
		return gjson.Result{}
	}
	if raw[0] == '"' {
		// The string's end is known: gjson would find it again byte by
		// byte.
		return gjson.Result{Type: gjson.String, Raw: raw, Str: pjson.Unquote(raw)}
	}
	return gjson.Parse(raw)
}

func (r *reader) fail(key, detail string) {
	if r.err == nil {
		r.err = &ReadError{Field: r.prefix() + key, detail: detail}
	}
}

func (r *reader) str(key string, required bool, def string) string {
	s, ok := r.text(key, required)
	if !ok {
		return def
	}
	return r.keep.of(s)
}

// text reads a string field as it lies in the document (not kept).
func (r *reader) text(key string, required bool) (string, bool) {
	f := r.get(key)
	switch {
	case !f.Exists() || f.Type == gjson.Null:
		if required {
			r.fail(key, "missing")
		}
		return "", false
	case f.Type != gjson.String:
		r.fail(key, "not a string")
		return "", false
	}
	return f.String(), true
}

// digest reads a required digest, blake3:<64 lowercase hex>.
func (r *reader) digest(key string) digest.Digest {
	text, _ := r.text(key, true)
	if r.err != nil {
		return digest.Digest{}
	}
	d, err := digest.Parse(text)
	if err != nil {
		r.fail(key, fmt.Sprintf("%q is not blake3:<64 lowercase hex digits>", text))
	}
	return d
}

func (r *reader) boolean(key string) bool {
	f := r.get(key)
	if f.Type != gjson.True && f.Type != gjson.False {
		r.fail(key, "missing or not true/false")
	}
	return f.Bool()
}

func (r *reader) integer(key string, required bool) (int, bool) {
	f := r.get(key)
	if !f.Exists() || f.Type == gjson.Null {
		if required {
			r.fail(key, "missing")
		}
		return 0, false
	}
	if f.Type != gjson.Number || float64(f.Int()) != f.Num {
		r.fail(key, "not an integer")
		return 0, false
	}
	return int(f.Int()), true
}

func (r *reader) count(key string, required bool) int {
	n, _ := r.integer(key, required)
	if n < 0 {
		r.fail(key, "negative")
		return 0
	}
	return n
}

func (r *reader) optCount(key string) *int {
	n, ok := r.integer(key, false)
	if !ok {
		return nil
	}
	if n < 0 {
		r.fail(key, "negative")
	}
	return &n
}

func (r *reader) optInt(key string) *int {
	n, ok := r.integer(key, false)
	if !ok {
		return nil
	}
	return &n
}
