package options

import (
	"errors"
	"fmt"
	"strconv"
)

// The kinds of bad input. Every *Error wraps exactly one of them, so callers
// can match with errors.Is.
var (
	ErrTooLarge     = errors.New("input too large")
	ErrInvalidUTF8  = errors.New("invalid UTF-8")
	ErrSyntax       = errors.New("malformed JSON")
	ErrDuplicateKey = errors.New("duplicate key")
	ErrUnknownKey   = errors.New("unknown key")
	ErrType         = errors.New("wrong type")
	ErrValue        = errors.New("invalid value")
	ErrMissing      = errors.New("missing key")
	ErrConflict     = errors.New("conflicting keys")
)

// Error is bad input, located: Path is the JSON path of the offending value
// (for example system[2].position), Offset its byte offset in the input when
// known (-1 otherwise).
type Error struct {
	Path   string
	Offset int
	Kind   error
	Detail string
}

func (e *Error) Error() string {
	where := e.Path
	if where == "" {
		where = "options"
	}
	msg := "options: " + where + ": " + e.Detail
	if e.Path == "" {
		msg = "options: " + e.Detail
	}
	if e.Offset >= 0 && (e.Kind == ErrSyntax || e.Kind == ErrInvalidUTF8) {
		msg += " (offset " + strconv.Itoa(e.Offset) + ")"
	}
	return msg
}

// Unwrap returns the kind of error.
func (e *Error) Unwrap() error { return e.Kind }

func errorf(kind error, path string, offset int, format string, args ...any) *Error {
	return &Error{Path: path, Offset: offset, Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// unknownKey reports a key the item does not take, pointing to the key
// Harn spells when the given one is a known near miss (text for content,
// label for title, ...).
func unknownKey(path, key string, offset int, hints map[string]string) *Error {
	if hint, ok := hints[key]; ok {
		return errorf(ErrUnknownKey, path, offset, "unknown key %q; use %q", key, hint)
	}
	return errorf(ErrUnknownKey, path, offset, "unknown key %q", key)
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func field(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
