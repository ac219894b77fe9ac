// Package journal writes transcripts: what each LLM call was served, and
// what came back, so that a run can be verified (package transcript) and
// replayed (journal/replay) offline.
//
// A Journal is a JSONL transcript, one event a line ({prev, seq, kind, at,
// ...}), each line's prev the BLAKE3 hash of the line before it (genesis for
// the first), so no line can be deleted, inserted, duplicated or moved
// without breaking the chain there. A session (one Journal) opens with
// journal_open and ends with journal_close counting its calls. A call is
// system_prompt (the exact bytes and their content hash) and
// context_manifest (canonical, with its content hash), each written only when
// it differs from the session's last, then provider_call_request (a
// harn.llm.served_context.v1 receipt naming them by hash, with the hashes of
// the messages, tools and parameters it retains), then
// provider_call_response or provider_call_error, each with its own content
// hash and naming its request by seq and line hash. docs/transcript.md
// describes the format for readers in other languages.
//
// Journal.Call fails closed: the manifest is validated against the exact
// bytes about to be sent before any line is written, read out of the
// provider request body itself when the call gives it (package payload).
// Appends are single O_APPEND writes of whole lines under an advisory file
// lock, so several writers share one file without loss; a Sink takes them
// elsewhere (journal/postgres: one chain a session in PostgreSQL).
//
// The chain's hashes are unkeyed. A journal given Options.Signer signs its
// session with checkpoints (sumdb/note notes over the chain and the RFC
// 6962 root of its calls), cosigned by the witnesses it asks
// (Options.Witnesses). Reading a transcript back, judging it and proving
// its calls is package transcript's: the writer reads nothing of a line
// but what it needs to append after it.
package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"

	"golang.org/x/mod/sumdb/note"
)

// servedContext is a request's receipt of what it was served. A verifier
// ignores fields it does not know, so later versions may add to it.
type servedContext struct {
	Schema                  string `json:"schema"`
	ManifestContentHash     string `json:"manifest_content_hash"`
	SystemPromptContentHash string `json:"system_prompt_content_hash"`
	SystemPromptBytes       int    `json:"system_prompt_bytes"`
	MessagesContentHash     string `json:"messages_content_hash"`
	ToolsContentHash        string `json:"tools_content_hash"`
	ParametersContentHash   string `json:"parameters_content_hash"`
	// The payload side, when the call gave its request body: the digest
	// (after redaction) and length of the body's system channel, the shape
	// it was read as, and the hash of the part of the body retained in
	// request.payload to re-derive them (docs/transcript.md).
	PayloadSystemContentHash string `json:"payload_system_content_hash,omitempty"`
	PayloadSystemBytes       *int   `json:"payload_system_bytes,omitempty"`
	PayloadProvider          string `json:"payload_provider,omitempty"`
	PayloadContentHash       string `json:"payload_content_hash,omitempty"`
	// The hash of request.received, the body as it came when the writer
	// changed it before sending (Request.Received): every member of the
	// request is bound to the receipt.
	ReceivedContentHash string `json:"received_content_hash,omitempty"`
}

// Request is one call as the harness makes it.
type Request struct {
	// Call names the call in reports and pins ("round-2/eu").
	Call string
	// System is the assembled system prompt; Manifest accounts for it.
	System   string
	Manifest *manifest.Manifest
	// Sent is the system text the provider adapter actually sends, when it
	// differs from System; nil means System is sent as it is. With a Body,
	// Sent says the adapter changed the text on purpose: the body's system
	// channel must then be Sent exactly, and the manifest is projected onto
	// it (manifest.Manifest.ForEgress) instead of proved for it (payload.Request.Verify).
	Sent *string
	// Body is the provider request body about to be sent (nil: not given).
	// Its system channel, read as Provider (payload.Auto detects the shape),
	// must hold to the manifest, and the transcript records its digest.
	Body     []byte
	Provider payload.Provider
	// Payload is Body as payload.Read read it, for a caller that read it
	// already (package transport does): its shape stands for Provider,
	// and the journal reads nothing of Body again.
	Payload *payload.Request
	// Messages, Tools and Parameters are JSON (nil: none).
	Messages   json.RawMessage
	Tools      json.RawMessage
	Parameters json.RawMessage
	// Received is the body as it came, when the caller changed it before
	// sending Body (a proxy that places cache breakpoints, or asks for
	// the provider's cache diagnostics), and Changed says how, in words:
	// both are kept in the request line (request.received), the body as
	// Body is. Both empty: Body is sent as it came. One without the other
	// is refused.
	Received []byte
	Changed  string
	// Unattributed records a call made without a manifest, on purpose
	// (package transport does, for a request with none on its context):
	// its request line holds Body, redacted, with its digest and length
	// (a JSON body as segments, each stored once in the session:
	// docs/transcript.md), and no receipt (served_context null), and
	// Verify counts it in
	// Report.Unattributed. Manifest must be nil. Call refuses a request
	// without a manifest that does not say so.
	Unattributed bool
}

// served is the system text the provider is sent (chain.Served).
func (r Request) served() string { return chain.Served(r.Body, r.Provider, r.Sent, r.System) }

// Response is a model's answer, as recorded: a summary (each field written
// only when set, so a response of text alone is the line it always was)
// and, when the caller has it, the body as received.
type Response struct {
	Text string `json:"text"`
	// StopReason is the provider's stop or finish reason.
	StopReason string             `json:"stop_reason,omitempty"`
	ToolCalls  []payload.ToolCall `json:"tool_calls,omitempty"`
	Usage      *payload.Usage     `json:"usage,omitempty"`
	// ID and Model are the provider's response id and model.
	ID    string `json:"id,omitempty"`
	Model string `json:"model,omitempty"`
	// Status is the HTTP status of the answer, when it came over HTTP.
	Status int `json:"status,omitempty"`
	// Body is the response body as received (JSON, or the stream of server
	// sent events as it came); the transcript keeps it redacted (or as it
	// is, with Options.KeepRaw) with its own content hash.
	Body []byte `json:"-"`
}

// Model answers requests.
type Model interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// ModelFunc adapts a function to Model.
type ModelFunc func(ctx context.Context, req Request) (Response, error)

// Complete implements Model. A nil ModelFunc answers with an error.
func (f ModelFunc) Complete(ctx context.Context, req Request) (Response, error) {
	if f == nil {
		return Response{}, fmt.Errorf("journal: call %s: a nil ModelFunc", req.Call)
	}
	return f(ctx, req)
}

// Options configure a Journal. The zero value (or nil) is the default.
// What a reader holds a transcript to (a verifier key, witnesses) is
// transcript.Options'.
type Options struct {
	// Clock stamps each line's "at"; nil is the time of day in UTC.
	Clock func() time.Time
	// Session is the session id a journal's lines carry; empty is a random
	// one. Tests set it for byte-stable transcripts. A file that opens the
	// id already (an earlier run's, another journal's) gets the session
	// under the id with "~N" after it, N the least that it does not open:
	// an id opened twice would fail Verify.
	Session string
	// Follows names the session this one continues (a conversation whose
	// session was closed while idle, resumed by a later call): its
	// journal_open says so, and Verify holds it to that session when the
	// transcript opens it (closed before this one opens). Empty: none.
	// A file that opens Session already gives the new session the id
	// with "~N" after it, so Session may be the old id there; a store's
	// chain has one writer, so there Session names a new chain.
	Follows string
	// MaxLineBytes is the longest transcript line Open reads (0:
	// promptloom.DefaultMaxBytes), as transcript.Options.MaxLineBytes is
	// the longest a reader reads. A longer line is an error matching
	// promptloom.ErrTooLarge: it is never held in memory whole. It is also
	// the longest a Journal writes, so that what it writes verifies: a
	// call whose request line would be longer is refused before it is
	// made (ErrTooLarge); a reply whose body would make its line longer
	// keeps its summary without the body, and one whose summary alone
	// would is recorded as a failed call that says so.
	MaxLineBytes int
	// KeepRaw retains the system prompt, messages, tools, parameters and
	// responses as they were, instead of redacted (the default, as Harn
	// redacts its transcripts). It is a risk: a secret pasted into a message is then
	// in the transcript for anyone who can read it. The receipts' hashes
	// are of the redacted values either way.
	KeepRaw bool
	// DeferOutcomeSync lets Finish return once a call's outcome lines are
	// written (the kernel has them: a process that dies keeps them),
	// rather than once they are on stable storage: on a file their fsync
	// is left to the file's next append (the next call's request, whose
	// fsync covers them) or to 10 ms later, whichever comes first, so that
	// calls one after another make one fsync each. Pending.Sync after
	// Finish waits for them. A machine that loses power before that fsync
	// ends may lose the outcome of a call whose harness was answered: the
	// transcript then ends with its request and no outcome, which Verify
	// reports as incomplete (never a call missing without a trace). The
	// request's lines are synced as before. The zero value syncs each
	// outcome before Finish returns. See docs/transcript.md, "What a crash
	// keeps".
	DeferOutcomeSync bool

	// Signer, when set, makes a journal sign its session (see
	// docs/transcript.md "Checkpoints"): it writes a journal_checkpoint
	// line, a note signed by Signer over the chain at the line before it,
	// after its journal_close and after every CheckpointEvery calls (0:
	// only at Close). Signers come from note.NewSigner, with a key from
	// note.GenerateKey (promptloom keygen).
	Signer          note.Signer
	CheckpointEvery int
	// Witnesses are the URLs of tlog-witnesses (c2sp.org/tlog-witness;
	// promptloom witness) a signing journal asks to cosign each checkpoint
	// before it writes it, with a consistency proof from the last one each
	// cosigned. A witness that refuses or does not answer within 10 seconds
	// leaves the checkpoint without its cosignature, and Close returns an
	// error naming it: the calls are recorded either way.
	Witnesses []string
}

func (o *Options) maxLine() int {
	if o == nil || o.MaxLineBytes <= 0 {
		return promptloom.DefaultMaxBytes
	}
	return o.MaxLineBytes
}

// callError is the outcome of a call whose model failed, as recorded: the
// error's text, redacted.
type callError struct {
	Message string `json:"message"`
}
