// Package journal records what each LLM call was served, and what came back,
// so that a run can be verified and replayed offline.
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
// provider request body itself when the call gives it (package payload). Appends are single
// O_APPEND writes of whole lines under an advisory file lock, so several
// writers share one file without loss. Verify checks a promptloom
// transcript, chain and all, or a Harn transcript's receipts. Package
// journal/replay keys calls by what the model is shown and answers from
// the pins of a recorded run.
//
// The chain's hashes are unkeyed. A journal given Options.Signer signs its
// session with checkpoints (sumdb/note notes over the chain and the RFC
// 6962 root of its calls), which Verify holds to Options.Verifier. Prove
// writes the inclusion proof of one call, for someone who sees nothing
// else of the transcript, and CheckProof checks it against the signer's
// key (in the manner of sumdb/tlog's ProveRecord and CheckRecord).
// Package journal/postgres keeps transcripts in PostgreSQL, one chain a
// session.
package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unsafe"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/manifest"
	"github.com/promptloom/promptloom/payload"

	"golang.org/x/mod/sumdb/note"
)

// The kinds of a transcript line (docs/transcript.md).
const (
	kindSystemPrompt    = "system_prompt"
	kindContextManifest = "context_manifest"
	kindRequest         = "provider_call_request"
	kindResponse        = "provider_call_response"
	kindError           = "provider_call_error"
	kindOpen            = "journal_open"
	kindClose           = "journal_close"
	kindAttempt         = "provider_call_attempt"
	kindRefused         = "provider_call_refused"
)

// servedContextSchema names the receipt a request carries.
const servedContextSchema = "harn.llm.served_context.v1"

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
	// it (manifest.ForEgress) instead of proved for it (payload.Request.Verify).
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

// Served is the system text the provider is sent: the body's system
// channel when the body is given and readable, else Sent, else System.
func (r Request) Served() string {
	if r.Body != nil {
		if c, err := systemChannel(r.Body, r.Provider); err == nil {
			return c.Text
		}
	}
	if r.Sent != nil {
		return *r.Sent
	}
	return r.System
}

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

// jsonHash is the content hash of a JSON value, Harn's
// stable_redacted_json_hash: BLAKE3 over its canonical encoding after
// Harn's redact_json (every string value redacted, and the value of a
// credential-like key replaced whole: redact.JSON). Empty JSON hashes as
// null.
func jsonHash(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	b, err := redact.JSON(raw)
	if err != nil {
		return "", err
	}
	return digest.Bytes(b).String(), nil
}

// Options configure a Journal and Verify. The zero value (or nil) is the
// default.
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
	// MaxLineBytes is the longest transcript line Open and Verify read (0:
	// promptloom.DefaultMaxBytes). A longer line is an error matching
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
	// Verifier, when set, makes Verify (and Prove) fail unless every
	// session ends in a checkpoint signed by its key that holds for the
	// chain at its line: without it, anyone who can write a transcript can
	// rewrite a whole run consistently, and only its head hash changes.
	// CheckProof takes its key as an argument, not from here.
	Verifier note.Verifier
	// Cosigners, with Verifier, make Verify fail unless the last
	// checkpoint of every session carries valid cosignatures of at least
	// Quorum of these witness keys (witness.NewVerifier); Quorum 0 is all
	// of them. A signature cannot show that its writer showed everyone the
	// same run; a quorum of witnesses, each of which cosigns only trees
	// consistent with the last it cosigned for the origin, can.
	Cosigners []note.Verifier
	Quorum    int
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

// quote is s as a JSON string, as canonical JSON writes it.
func quote(s string) string {
	// Sized for a few escapes, so a long text is not copied as it grows,
	// and never written again, so the string is its bytes.
	b := pjson.AppendString(make([]byte, 0, len(s)+len(s)/16+2), s)
	return unsafe.String(unsafe.SliceData(b), len(b))
}
