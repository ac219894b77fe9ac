package promptloom

import (
	"errors"
	"fmt"
)

// The two ways a list of fragments is unfit to become a prompt.
var (
	// ErrEmptyID: every row of a prompt names its fragment.
	ErrEmptyID = errors.New("fragment id is empty")
	// ErrReplacementNotAlone: a replacement root (a Verbatim fragment) is
	// the whole prompt, so it stands alone.
	ErrReplacementNotAlone = errors.New("replacement root must be the only fragment")
)

// IDError is a fragment refused for its id. Index is the fragment's place
// in the list checked.
//
// Only an empty id is refused. Two fragments with one id are accepted, even
// with different bodies: Harn builds them (a tool declared twice gives two
// tool:NAME.guidance fragments, each with its copy's guidance, and
// _system_fragments items may repeat an id), and its manifests record them.
// What Harn refuses, two included rows with one id and one digest, is
// manifest.Validate's rule.
type IDError struct {
	Index  int
	ID     string
	Source string
	Err    error
}

func (e *IDError) Error() string {
	return fmt.Sprintf("fragment %d (source %q): %v", e.Index, e.Source, e.Err)
}

// Unwrap returns the sentinel (ErrEmptyID).
func (e *IDError) Unwrap() error { return e.Err }

// Check reports whether frags can become one prompt: each fragment named
// (an *IDError matching ErrEmptyID), and a replacement root alone (an error
// matching ErrReplacementNotAlone). The reducer checks this before it reads
// anything, and so does the pipeline's last stage, kernel.prompt.
func Check(frags []Fragment) error {
	for i := range frags {
		if frags[i].ID == "" {
			return &IDError{Index: i, Source: frags[i].Source, Err: ErrEmptyID}
		}
		if frags[i].Verbatim && len(frags) != 1 {
			return fmt.Errorf("%w: %q stands beside %d other fragment(s)",
				ErrReplacementNotAlone, frags[i].ID, len(frags)-1)
		}
	}
	return nil
}
