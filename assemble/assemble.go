// Package assemble is the conversation reducer: it turns a harness's
// tools, system fragments and turns into one provider request body, the
// same bytes on every run, and accounts for every part of it and every
// cache breakpoint it placed.
//
// When the turns outgrow the context window, Assemble compacts them:
// tool results are cleared (replaced by a stub), turns with a summary are
// summarised, and, only when that is not enough, the oldest turns that
// may be shed are dropped. A compaction rewrites the provider's cache from
// its first cut onwards, so it is priced as the cache write it causes
// against the cache reads it saves over the calls that follow, and cuts
// come in batches that pay for themselves. The cached head of the request
// (tools, system, and the stubs and summaries of earlier compactions)
// stays byte-identical, and binding parts (the task, the latest user
// turn, a tool call still waiting for its result, the turns new since the
// previous call, any turn in register binding) are never shed.
//
// Every decision is a function of the turns before it: assembling the
// turns of call n+1 repeats every cut made for calls 1..n, so the bodies
// of a session share their prefixes as a cache needs them to. The
// provider's wire and cache rules are packages payload, request and cache;
// this package decides only what to send.
package assemble

import (
	"errors"
	"fmt"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/budget"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/payload"
)

// Conversation is what a harness gives Assemble: the provider and model,
// the window, the tools, the system fragments and the turns so far.
type Conversation struct {
	Provider payload.Provider
	Model    string
	// Window is the model's context window and OutputReserve the tokens
	// kept for the answer (the body's max_tokens): the request's input is
	// held to Window - OutputReserve.
	Window        int
	OutputReserve int
	Tools         []Tool
	// System are the system prompt's fragments, reduced by
	// promptloom.Reduce with the tools active, so that a fragment gated on
	// a tool (a tool's guidance, promptloom.ToolGuidance) is in the prompt
	// when its tool is sent. A fragment with no Source is its ID's.
	System []promptloom.Fragment
	Turns  []Turn
}

// Tool is a tool definition. Its guidance for the system prompt is a
// fragment gated on it (promptloom.ToolGuidance) in Conversation.System.
type Tool struct {
	Name        string
	Description string
	// Schema is the tool's input JSON Schema (an object); nil is {"type":"object"}.
	Schema []byte
}

// The kinds of turn.
const (
	User       = "user"
	Assistant  = "assistant"
	ToolCall   = "tool_call"
	ToolResult = "tool_result"
)

// Turn is one part of the conversation: a user or assistant message, a
// tool call, or a tool call's result.
type Turn struct {
	// ID names the turn in the manifest; it must be unique. Source says
	// who produced it ("user", "model", "tool:Bash", ...).
	ID     string
	Source string
	// Kind is User, Assistant, ToolCall or ToolResult.
	Kind string
	// Text is a message's text or a tool result's content.
	Text string
	// Call links a tool call to its result (Anthropic's tool_use id,
	// OpenAI's tool_call_id); Tool and Input are a call's tool name and
	// arguments (a JSON object).
	Call  string
	Tool  string
	Input []byte
	// IsError marks a tool result that reports a failure.
	IsError bool
	// Register says whether the turn may be shed, as for fragments: the
	// zero value, budget.Binding, is never shed; a turn the harness lets
	// compaction cut says Considered, Craft or Generated (shed first).
	Register budget.Register
	// Priority orders turns for a harness's own pruning; Assemble keeps it
	// in the manifest and cuts by age and price, not by it.
	Priority int
	// Task marks the turn that states the task (binding). With none
	// marked, the first user turn is the task.
	Task bool
	// Summary, when given, stands in for the turn once it is compacted.
	Summary string
}

// Options tune Assemble. The zero value (or nil) is the defaults.
type Options struct {
	// WhenFull compacts only when the turns do not fit the window. By
	// default compaction is priced: it also compacts when the cache reads
	// that the cuttable turns have cost since the last compaction reach
	// the cache write the cut would cause, and the cut pays for itself
	// within ExpectedTurns. Priced measured cheapest (docs/assemble.md).
	WhenFull bool
	// ExpectedTurns is how many further calls a cut is expected to serve;
	// 0 is 20.
	ExpectedTurns int
	// KeepRecent is how many tokens of the latest turns a compaction
	// leaves whole; 0 is a quarter of the input budget.
	KeepRecent int
	// Summarize, when set, gives a summary for a turn that has none; ""
	// leaves it to be cleared (a tool result) or kept. It is asked when a
	// turn first leaves the kept window, on every Assemble of the
	// conversation from then on: it must give the same summary for the
	// same turn (keep them), or the prefix a cache holds changes.
	Summarize func(Turn) (string, error)

	// decide, in tests, overrides the strategy at each call: compact or
	// not (a call that does not fit is compacted whatever it says).
	decide func(call int) bool
}

// Statuses of a part.
const (
	Included   = "included"
	Cleared    = "cleared"
	Summarised = "summarised"
	Dropped    = "dropped"
)

// schema names the manifest's format.
const schema = "promptloom.assembly.v1"

// Manifest accounts for every part of an assembled request and every
// breakpoint in it.
type Manifest struct {
	// Schema is promptloom.assembly.v1.
	Schema        string `json:"schema"`
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	Window        int    `json:"window"`
	OutputReserve int    `json:"output_reserve"`
	// Counter names what tokens count ("estimate": a token every four
	// bytes of a block's JSON, where the provider's tokenizer is not public).
	Counter string `json:"counter"`
	// Prices says what a compaction was priced at: the model's cache
	// prices from package cache's table, or, for a model not in it, the
	// provider's default, and says which.
	Prices string `json:"prices"`
	// Tokens is the request's input as counted.
	Tokens      int           `json:"tokens"`
	Parts       []Part        `json:"parts"`
	Breakpoints []Breakpoint  `json:"breakpoints"`
	Compactions []Compaction  `json:"compactions"`
	BodyDigest  digest.Digest `json:"body_digest"`
}

// Part is what became of one tool, system fragment or turn.
type Part struct {
	ID       string `json:"id"`
	Source   string `json:"source,omitempty"`
	Kind     string `json:"kind"`
	Register string `json:"register,omitempty"`
	Priority int    `json:"priority,omitempty"`
	// Status is Included, Cleared, Summarised or Dropped; Reason says why.
	Status string `json:"status"`
	Reason string `json:"reason"`
	// Path is where the part is in the body (an RFC 6901 pointer; "" when
	// dropped); Bytes and Tokens are what is sent for it.
	Path   string `json:"path,omitempty"`
	Bytes  int    `json:"bytes"`
	Tokens int    `json:"tokens"`
	// Digest is of the part's own content (its text, or a call's input),
	// redacted, whatever was sent for it.
	Digest digest.Digest `json:"digest"`
}

// Breakpoint is one cache breakpoint Assemble placed.
type Breakpoint struct {
	Path string `json:"path"`
	TTL  string `json:"ttl"`
	// Tokens is the prefix it caches, counted from the start.
	Tokens int    `json:"tokens"`
	Reason string `json:"reason"`
}

// Compaction is one batch of cuts, made at a call.
type Compaction struct {
	// At names the call the batch was made at by its last turn ("turn ID").
	At string `json:"at"`
	// Cleared, Summarised and Dropped count the parts cut; Saved is the
	// tokens they took out; Rewrite the tokens written again from the
	// first cut to the end of that call.
	Cleared    int    `json:"cleared"`
	Summarised int    `json:"summarised"`
	Dropped    int    `json:"dropped"`
	Saved      int    `json:"saved"`
	Rewrite    int    `json:"rewrite"`
	Reason     string `json:"reason"`
}

// ErrInvalid is matched by every *Error: the conversation cannot be
// assembled as given.
var ErrInvalid = errors.New("assemble: invalid conversation")

// ErrNoFit is matched by an *Error when the binding parts alone, with the
// tools and system, do not fit the window.
var ErrNoFit = errors.New("assemble: the binding parts do not fit the window")

// Error says what is wrong and with which part.
type Error struct {
	// ID is the part at fault (a turn's or tool's id); Field the field.
	ID    string
	Field string
	Msg   string
	kind  error
}

// Error says what is wrong, and with which part and field.
func (e *Error) Error() string {
	where := ""
	switch {
	case e.ID != "" && e.Field != "":
		where = fmt.Sprintf("%s: %s: ", e.ID, e.Field)
	case e.ID != "":
		where = e.ID + ": "
	case e.Field != "":
		where = e.Field + ": "
	}
	return fmt.Sprintf("%v: %s%s", e.kind, where, e.Msg)
}

// Is matches ErrInvalid, and ErrNoFit for a conversation that cannot fit.
func (e *Error) Is(t error) bool { return t == ErrInvalid || t == e.kind }

func invalid(id, field, format string, args ...any) *Error {
	return &Error{ID: id, Field: field, Msg: fmt.Sprintf(format, args...), kind: ErrInvalid}
}
