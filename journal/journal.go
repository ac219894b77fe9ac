// Package journal records what each LLM call was served, so that a run can
// be verified and replayed offline.
//
// A Journal is a JSONL transcript, one event a line ({seq, kind, at, ...}):
// system_prompt (the exact bytes and their content hash), context_manifest
// (the manifest, canonical, and its content hash), provider_call_request
// (a harn.llm.served_context.v1 receipt naming both by hash, plus the
// messages, tools and parameters) and provider_call_response. A system
// prompt or manifest equal to the last one of its kind is not written again.
//
// Journal.Call fails closed: the manifest is validated against the exact
// bytes about to be sent before any line is written, and a call's lines go
// to the file in one write followed by fsync, so a crash leaves whole calls
// only. Verify checks a transcript written by promptloom or another tool in
// this format. PinnedModel keys calls by their request and answers from the
// pins of a recorded run.
package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/canon"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/redact"
)

// Event kinds of a transcript line.
const (
	KindSystemPrompt    = "system_prompt"
	KindContextManifest = "context_manifest"
	KindRequest         = "provider_call_request"
	KindResponse        = "provider_call_response"
)

// ServedContextSchema names the receipt a request carries.
const ServedContextSchema = "harn.llm.served_context.v1"

// ServedContext is a request's receipt of what it was served.
type ServedContext struct {
	Schema                  string `json:"schema"`
	ManifestContentHash     string `json:"manifest_content_hash"`
	SystemPromptContentHash string `json:"system_prompt_content_hash"`
	SystemPromptBytes       int    `json:"system_prompt_bytes"`
	MessagesContentHash     string `json:"messages_content_hash"`
	ToolsContentHash        string `json:"tools_content_hash"`
}

// Request is one call as the harness makes it.
type Request struct {
	// Call names the call in reports and pins ("round-2/eu").
	Call string
	// System is the assembled system prompt; Manifest accounts for it.
	System   string
	Manifest *manifest.Manifest
	// Sent is the system text the provider adapter actually sends, when it
	// differs from System; nil means System is sent as it is.
	Sent *string
	// Messages, Tools and Parameters are JSON (nil: none).
	Messages   json.RawMessage
	Tools      json.RawMessage
	Parameters json.RawMessage
}

// served is the system text the provider is sent.
func (r Request) served() string {
	if r.Sent != nil {
		return *r.Sent
	}
	return r.System
}

// Response is a model's answer.
type Response struct {
	Text string `json:"text"`
}

// Model answers requests.
type Model interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// ModelFunc adapts a function to Model.
type ModelFunc func(ctx context.Context, req Request) (Response, error)

// Complete implements Model.
func (f ModelFunc) Complete(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }

// JSONHash is the content hash of a JSON value: BLAKE3 over its canonical
// encoding with every string redacted first. Empty JSON hashes as null.
func JSONHash(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	b, err := canon.EncodeStrings(raw, redact.String)
	if err != nil {
		return "", err
	}
	return digest.Bytes(b).String(), nil
}

// Journal appends calls to a transcript file.
type Journal struct {
	mu       sync.Mutex
	w        io.Writer
	sync     func() error
	close    func() error
	clock    func() time.Time
	seq      int64
	last     map[string]string // kind -> content hash of its last line
	Repaired int               // bytes of a torn last line cut off when the file was opened
}

// Option configures a Journal.
type Option func(*Journal)

// WithClock sets the clock of the lines' "at".
func WithClock(clock func() time.Time) Option { return func(j *Journal) { j.clock = clock } }

// Open opens (creating it if need be) a transcript file for appending.
// A torn last line, which only a crash during a write can leave, is cut off
// (Repaired says how many bytes); the sequence continues after the last
// line's seq.
func Open(path string, opts ...Option) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	whole := len(data)
	if whole > 0 && data[whole-1] != '\n' {
		whole = bytes.LastIndexByte(data, '\n') + 1
		if err := f.Truncate(int64(whole)); err != nil {
			f.Close()
			return nil, fmt.Errorf("journal: repair: %w", err)
		}
	}
	if _, err := f.Seek(int64(whole), io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := New(f, opts...)
	j.sync, j.close = f.Sync, f.Close
	j.Repaired = len(data) - whole
	for line := range bytes.SplitSeq(data[:whole], []byte("\n")) {
		if s, ok := lineSeq(line); ok {
			j.seq = max(j.seq, s)
		}
	}
	return j, nil
}

// New returns a journal writing to w (no fsync: tests and in-memory runs).
func New(w io.Writer, opts ...Option) *Journal {
	j := &Journal{w: w, sync: func() error { return nil }, close: func() error { return nil },
		clock: func() time.Time { return time.Now().UTC() }, last: map[string]string{}}
	for _, o := range opts {
		o(j)
	}
	return j
}

// Close closes the file.
func (j *Journal) Close() error { return j.close() }

// ErrStaleManifest wraps a manifest that does not hold for the bytes about
// to be sent: the call is not made and nothing is written.
var ErrStaleManifest = errors.New("journal: manifest does not hold for the bytes to send")

// Call validates, records and makes one call: the manifest must hold for
// the assembled prompt (projected to the bytes actually sent when an adapter
// changed them); then the system prompt, manifest and request go to the
// transcript in one fsynced write; then the model is asked, and its response
// is recorded the same way. Nothing is written for a call that fails
// validation.
func (j *Journal) Call(ctx context.Context, m Model, req Request) (Response, error) {
	if req.Manifest == nil {
		return Response{}, fmt.Errorf("%w: call %s has no manifest", ErrStaleManifest, req.Call)
	}
	if err := manifest.Validate(req.Manifest, req.System); err != nil {
		return Response{}, fmt.Errorf("%w: call %s: %w", ErrStaleManifest, req.Call, err)
	}
	served, mf := req.served(), req.Manifest
	if served != req.System {
		var err error
		if mf, err = req.Manifest.ForEgress(served); err != nil {
			return Response{}, fmt.Errorf("%w: call %s: egress: %w", ErrStaleManifest, req.Call, err)
		}
	}
	mbytes, err := mf.Canonical()
	if err != nil {
		return Response{}, err
	}
	sc := ServedContext{
		Schema:                  ServedContextSchema,
		ManifestContentHash:     manifest.HashBytes(mbytes),
		SystemPromptContentHash: digest.Of(served).String(),
		SystemPromptBytes:       len(served),
	}
	if sc.MessagesContentHash, err = JSONHash(req.Messages); err != nil {
		return Response{}, fmt.Errorf("journal: call %s: messages: %w", req.Call, err)
	}
	if sc.ToolsContentHash, err = JSONHash(req.Tools); err != nil {
		return Response{}, fmt.Errorf("journal: call %s: tools: %w", req.Call, err)
	}

	j.mu.Lock()
	var b strings.Builder
	seq := j.seq
	line := func(kind string, fields ...string) {
		seq++
		fmt.Fprintf(&b, `{"seq":%d,"kind":%s,"at":%s`, seq, quote(kind), quote(j.clock().Format(time.RFC3339Nano)))
		for i := 0; i < len(fields); i += 2 {
			fmt.Fprintf(&b, ",%s:%s", quote(fields[i]), fields[i+1])
		}
		b.WriteString("}\n")
	}
	if j.last[KindSystemPrompt] != sc.SystemPromptContentHash {
		line(KindSystemPrompt, "content", quote(served), "content_hash", quote(sc.SystemPromptContentHash))
	}
	if j.last[KindContextManifest] != sc.ManifestContentHash {
		line(KindContextManifest, "content_hash", quote(sc.ManifestContentHash), "manifest", string(mbytes))
	}
	scJSON, _ := json.Marshal(sc)
	reqJSON, err := canon.Marshal(map[string]json.RawMessage{
		"messages": orNull(req.Messages), "tools": orNull(req.Tools), "parameters": orNull(req.Parameters)})
	if err != nil {
		j.mu.Unlock()
		return Response{}, fmt.Errorf("journal: call %s: request: %w", req.Call, err)
	}
	line(KindRequest, "call", quote(req.Call), "served_context", string(scJSON), "request", string(reqJSON))
	requestSeq := seq
	if err := j.write(b.String()); err != nil {
		j.mu.Unlock()
		return Response{}, err
	}
	j.seq = seq
	j.last[KindSystemPrompt], j.last[KindContextManifest] = sc.SystemPromptContentHash, sc.ManifestContentHash
	j.mu.Unlock()

	resp, err := m.Complete(ctx, req)
	if err != nil {
		return Response{}, fmt.Errorf("call %s: %w", req.Call, err)
	}
	respJSON, _ := json.Marshal(resp)
	j.mu.Lock()
	defer j.mu.Unlock()
	b.Reset()
	seq = j.seq
	line(KindResponse, "call", quote(req.Call), "request_seq", strconv.FormatInt(requestSeq, 10), "response", string(respJSON))
	if err := j.write(b.String()); err != nil {
		return Response{}, err
	}
	j.seq = seq
	return resp, nil
}

// write appends one call's lines with a single write, then syncs: a process
// killed meanwhile leaves the whole group or none of it.
func (j *Journal) write(s string) error {
	if _, err := io.WriteString(j.w, s); err != nil {
		return fmt.Errorf("journal: write: %w", err)
	}
	if err := j.sync(); err != nil {
		return fmt.Errorf("journal: sync: %w", err)
	}
	return nil
}

func quote(s string) string {
	var b strings.Builder
	canon.WriteString(&b, s)
	return b.String()
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
