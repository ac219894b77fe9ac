// Package budget is the vocabulary of a prompt's size limit: a Budget (a
// Counter and a total), the Counter that counts in bytes or in real tokens,
// offline, and the Register that says how a fragment may be treated when
// the prompt is over it. promptloom.Reduce holds a prompt to a budget
// (Options.Budget): it sheds by register (never binding), then rank, then
// later-first, and counts the whole prompt exactly as fragments leave it,
// each distinct text counted once and remembered across calls.
package budget

import (
	"fmt"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Counter counts a text. Implementations are safe for concurrent use.
type Counter interface {
	// Encoding names what is counted: "bytes", "o200k_base", "cl100k_base".
	Encoding() string
	// Count returns the size of s.
	Count(s string) int
}

// The encodings NewCounter knows.
const (
	encodingBytes  = "bytes"
	encodingO200k  = "o200k_base"
	encodingCl100k = "cl100k_base"
)

// Bytes counts bytes.
func Bytes() Counter { return bytesCounter{} }

type bytesCounter struct{}

func (bytesCounter) Encoding() string   { return encodingBytes }
func (bytesCounter) Count(s string) int { return len(s) }

// NewCounter returns the counter of an encoding: bytes, o200k_base or
// cl100k_base. Token vocabularies are compiled into the binary: nothing is
// downloaded.
func NewCounter(encoding string) (Counter, error) {
	switch encoding {
	case encodingBytes:
		return Bytes(), nil
	case encodingO200k, encodingCl100k:
		return tokenCounter(encoding)
	}
	return nil, fmt.Errorf("unknown counter %q (want bytes, o200k_base or cl100k_base)", encoding)
}

// A tokenizer codec is expensive to build (its vocabulary is a large map);
// one per encoding is shared, and it is safe for concurrent use.
var (
	codecsMu sync.Mutex
	codecs   = map[string]Counter{}
)

func tokenCounter(encoding string) (Counter, error) {
	codecsMu.Lock()
	defer codecsMu.Unlock()
	if c, ok := codecs[encoding]; ok {
		return c, nil
	}
	codec, err := tokenizer.Get(tokenizer.Encoding(encoding))
	if err != nil {
		return nil, fmt.Errorf("counter %s: %w", encoding, err)
	}
	c := tokens{encoding: encoding, codec: codec}
	codecs[encoding] = c
	return c, nil
}

type tokens struct {
	encoding string
	codec    tokenizer.Codec
}

func (t tokens) Encoding() string { return t.encoding }

func (t tokens) Count(s string) int {
	n, err := t.codec.Count(s)
	if err != nil {
		// Only the strict error mode fails, and it is not set: the input is
		// valid UTF-8 (options are checked) and is counted as it is.
		panic("budget: tokenizer: " + err.Error())
	}
	return n
}
