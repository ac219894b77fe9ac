package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
	"github.com/tidwall/gjson"
)

// CallReport is the verdict on one request of a transcript.
type CallReport struct {
	// Line is the request's line number (from 1).
	Line int    `json:"line"`
	Seq  int64  `json:"seq"`
	Call string `json:"call"`
	OK   bool   `json:"ok"`
	// Problem says what failed, with the line it failed on.
	Problem string `json:"problem,omitempty"`
}

// Report is the verdict on a whole transcript.
type Report struct {
	Calls []CallReport `json:"calls"`
	// Problems are lines that could not be read at all.
	Problems []string `json:"problems,omitempty"`
}

// OK reports whether every call verified and every line was read.
func (r *Report) OK() bool {
	if len(r.Problems) > 0 {
		return false
	}
	for _, c := range r.Calls {
		if !c.OK {
			return false
		}
	}
	return true
}

// retained is a system prompt or manifest line, by its declared hash.
type retained struct {
	line int
	raw  string // content (system prompt) or the manifest's exact bytes
	hash string // the hash recomputed from raw
}

// Verify checks every request of a transcript: its manifest_content_hash
// must name a retained context_manifest whose exact bytes hash to it, its
// system_prompt_content_hash a retained system_prompt whose content hashes
// to it and equals the manifest's whole_prompt_digest, with the byte count
// it claims; the manifest must validate against that content; messages and
// tools, when the request carries them, must hash to their receipts.
// Unknown fields and kinds are skipped, and both manifest boundaries are
// accepted, so transcripts of other tools in this format verify too.
func Verify(r io.Reader) (*Report, error) {
	rep := &Report{}
	systems, manifests := map[string]retained{}, map[string]retained{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		if !json.Valid(sc.Bytes()) { // not gjson.Valid: it recurses, and deep nesting overflows the stack
			rep.Problems = append(rep.Problems, fmt.Sprintf("line %d: not JSON", n))
			continue
		}
		v := gjson.Parse(text)
		switch v.Get("kind").String() {
		case KindSystemPrompt:
			content := v.Get("content").String()
			systems[v.Get("content_hash").String()] = retained{line: n, raw: content, hash: digest.Of(content).String()}
		case KindContextManifest:
			raw := v.Get("manifest").Raw
			manifests[v.Get("content_hash").String()] = retained{line: n, raw: raw, hash: manifest.HashBytes([]byte(raw))}
		case KindRequest:
			rep.Calls = append(rep.Calls, verifyRequest(n, v, systems, manifests))
		}
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("journal: read: %w", err)
	}
	return rep, nil
}

var errCall = errors.New("call does not verify")

func verifyRequest(n int, v gjson.Result, systems, manifests map[string]retained) CallReport {
	c := CallReport{Line: n, Seq: v.Get("seq").Int(), Call: v.Get("call").String()}
	if err := checkRequest(v, systems, manifests); err != nil {
		c.Problem = err.Error()
		return c
	}
	c.OK = true
	return c
}

func checkRequest(v gjson.Result, systems, manifests map[string]retained) error {
	s := v.Get("served_context")
	if !s.IsObject() {
		return fmt.Errorf("%w: no served_context", errCall)
	}
	if schema := s.Get("schema").String(); schema != ServedContextSchema {
		return fmt.Errorf("%w: served_context schema %q", errCall, schema)
	}
	mhash := s.Get("manifest_content_hash").String()
	m, ok := manifests[mhash]
	switch {
	case !ok:
		return fmt.Errorf("%w: no retained context_manifest has content_hash %s", errCall, mhash)
	case m.hash != mhash:
		return fmt.Errorf("%w: the context_manifest at line %d does not hash to its content_hash (%s)", errCall, m.line, m.hash)
	}
	shash := s.Get("system_prompt_content_hash").String()
	sys, ok := systems[shash]
	switch {
	case !ok:
		return fmt.Errorf("%w: no retained system_prompt has content_hash %s", errCall, shash)
	case sys.hash != shash:
		return fmt.Errorf("%w: the system_prompt at line %d does not hash to its content_hash (%s)", errCall, sys.line, sys.hash)
	}
	if got := s.Get("system_prompt_bytes"); !got.Exists() || int(got.Int()) != len(sys.raw) {
		return fmt.Errorf("%w: system_prompt_bytes %s, but the system prompt at line %d has %d bytes", errCall, got.Raw, sys.line, len(sys.raw))
	}
	mf, err := manifest.Read([]byte(m.raw))
	if err != nil {
		return fmt.Errorf("%w: the context_manifest at line %d: %w", errCall, m.line, err)
	}
	if mf.WholePromptDigest != shash {
		return fmt.Errorf("%w: system_prompt_content_hash is not the manifest's whole_prompt_digest %s", errCall, mf.WholePromptDigest)
	}
	if err := manifest.Validate(mf, sys.raw); err != nil {
		return fmt.Errorf("%w: the manifest at line %d does not hold for the system prompt at line %d: %w", errCall, m.line, sys.line, err)
	}
	req := v.Get("request")
	for _, part := range []struct{ field, receipt string }{{"messages", "messages_content_hash"}, {"tools", "tools_content_hash"}} {
		got := req.Get(part.field)
		want := s.Get(part.receipt).String()
		if !req.Exists() || want == "" {
			continue // a transcript that does not retain them cannot check them
		}
		h, err := JSONHash([]byte(orRawNull(got.Raw)))
		if err != nil || h != want {
			return fmt.Errorf("%w: %s do not hash to %s", errCall, part.field, part.receipt)
		}
	}
	return nil
}

func orRawNull(raw string) string {
	if raw == "" {
		return "null"
	}
	return raw
}

// lineSeq reads the seq of a transcript line.
func lineSeq(line []byte) (int64, bool) {
	if !json.Valid(line) {
		return 0, false
	}
	s := gjson.GetBytes(line, "seq")
	return s.Int(), s.Exists()
}

// WriteText writes one line per call and per problem, and a summary.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "FAIL %s\n", p)
	}
	good := 0
	for _, c := range r.Calls {
		if c.OK {
			good++
			fmt.Fprintf(&b, "ok   line %d: call %s (seq %d)\n", c.Line, c.Call, c.Seq)
		} else {
			fmt.Fprintf(&b, "FAIL line %d: call %s (seq %d): %s\n", c.Line, c.Call, c.Seq, c.Problem)
		}
	}
	fmt.Fprintf(&b, "%d of %d call(s) verified\n", good, len(r.Calls))
	_, err := io.WriteString(w, b.String())
	return err
}
