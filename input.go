package promptloom

import "errors"

// DefaultMaxBytes is the size limit of every input the library reads whole
// (options, manifests, transcript lines, request bodies, templates) when
// the caller sets none: large enough for any real prompt, small enough
// that a hostile file cannot take the machine's memory.
const DefaultMaxBytes = 64 << 20

// ErrTooLarge is matched (errors.Is) by the error for any input over its
// size limit, whichever reader refused it.
var ErrTooLarge = errors.New("input too large")

// Warning is input that is accepted, as Harn accepts it, but is likely a
// mistake (a key Harn does not read, a tool without a name), or a choice
// of the library's that the caller may want to act on (a gated fragment
// that splits the prompt cache). Path and ID say what it is about; either
// may be empty.
type Warning struct {
	// Path is a JSON path into the input, e.g. tools[1].guidance.
	Path string `json:"path,omitempty"`
	// ID is the fragment the warning is about.
	ID      string `json:"id,omitempty"`
	Message string `json:"message"`
}

// String returns the warning as one line: "PATH: MESSAGE", or
// "ID: MESSAGE", or the message alone.
func (w Warning) String() string {
	switch {
	case w.Path != "":
		return w.Path + ": " + w.Message
	case w.ID != "":
		return w.ID + ": " + w.Message
	}
	return w.Message
}
