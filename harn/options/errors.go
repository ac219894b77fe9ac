package options

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/promptloom/promptloom/internal/redact"
)

// The kinds of bad input. Every *Error matches one of them with
// errors.Is, or promptloom.ErrTooLarge for input over the size limit.
var (
	// ErrMalformed is input that is not JSON every reader reads alike: not
	// UTF-8, not JSON by its grammar, nested deeper than 10,000 levels, a
	// key given twice in an object (readers disagree on which copy wins),
	// or a number past float range. Nothing of it is read.
	ErrMalformed = errors.New("malformed JSON")
	// ErrInvalid is options Harn refuses: an unknown key or a removed
	// alias, a value of the wrong type or out of range, a missing key,
	// call_role and mock_scope at odds, a top-level key Harn's llm_call
	// removed (the message says what to write instead).
	ErrInvalid = errors.New("invalid options")
)

// Error is bad input, located: Path is the JSON path of the offending value
// (for example system[2].position; "" for the document), Offset its byte
// offset in the input when known (-1 otherwise). What is wrong is matched
// with errors.Is: ErrMalformed, ErrInvalid or promptloom.ErrTooLarge.
type Error struct {
	Path   string
	Offset int
	// kind is what is wrong; detail the rest of the message.
	kind   error
	detail string
	// named: detail begins with the path itself, worded as Harn words the
	// error ("_system_fragments[0].bucket must be ..."), so Error does not
	// repeat it. located: the message ends with the offset (malformed
	// JSON, or bytes that are not UTF-8).
	named, located bool
	// cause is the *template.Error of a template that did not render.
	cause error
}

// Error names the JSON path and, where known, the byte offset.
func (e *Error) Error() string {
	msg := "options: " + e.Path + ": " + e.detail
	if e.Path == "" || e.named {
		msg = "options: " + e.detail
	}
	if e.located && e.Offset >= 0 {
		msg += " (offset " + strconv.Itoa(e.Offset) + ")"
	}
	return msg
}

// Unwrap returns the kind of error and, for a templated item whose
// template did not parse or render, the *template.Error with Harn's
// message and position (errors.As finds it).
func (e *Error) Unwrap() []error {
	if e.cause != nil {
		return []error{e.kind, e.cause}
	}
	return []error{e.kind}
}

func errorf(kind error, path string, offset int, format string, args ...any) *Error {
	return &Error{Path: path, Offset: offset, kind: kind, detail: fmt.Sprintf(format, args...)}
}

// located marks e's message to end with its offset.
func located(e *Error) *Error {
	e.located = true
	return e
}

// harnf is errorf for a message worded as Harn words it, the path leading
// it (format's first verb is the path).
func harnf(kind error, path string, offset int, format string, args ...any) *Error {
	e := errorf(kind, path, offset, format, append([]any{path}, args...)...)
	e.named = true
	return e
}

// unknownKey reports a key the item does not take, pointing to the key
// Harn spells when the given one is a known near miss (text for content,
// label for title, ...).
func unknownKey(path, key string, offset int, hints map[string]string) *Error {
	if hint, ok := hints[key]; ok {
		return errorf(ErrInvalid, path, offset, "unknown key `%s`; use `%s`", clip(key), hint)
	}
	return errorf(ErrInvalid, path, offset, "unknown key `%s`", clip(key))
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func field(path, key string) string {
	key = clip(key)
	if path == "" {
		return key
	}
	return path + "." + key
}

// quote is internal/redact.Quote: redacted, cut to 80 characters, Go-quoted.
func quote(s string) string { return redact.Quote(s) }

// plainLimit is the longest text clip shows unquoted: as much as Quote
// keeps of a value.
const plainLimit = 80

// clip returns s as it is when it is short, printable and holds no secret,
// and quote(s) otherwise: for keys in paths and numbers in messages.
func clip(s string) string {
	if len(s) <= plainLimit && redact.String(s) == s && isPlain(s) {
		return s
	}
	return quote(s)
}

func isPlain(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) || r == '"' {
			return false
		}
	}
	return true
}
