package options

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/promptloom/promptloom/harn/redact"
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
	// ErrRemoved is a top-level key Harn's llm_call removed; the message
	// says what to write instead.
	ErrRemoved = errors.New("removed option")
)

// Error is bad input, located: Path is the JSON path of the offending value
// (for example system[2].position), Offset its byte offset in the input when
// known (-1 otherwise).
type Error struct {
	Path   string
	Offset int
	Kind   error
	Detail string
	// named: Detail begins with the path itself, worded as Harn words the
	// error ("_system_fragments[0].bucket must be ..."), so Error does not
	// repeat it.
	named bool
}

func (e *Error) Error() string {
	where := e.Path
	if where == "" {
		where = "options"
	}
	msg := "options: " + where + ": " + e.Detail
	if e.Path == "" || e.named {
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

// harnf is errorf for a message worded as Harn words it, the path leading
// it (format's first verb is the path).
func harnf(kind error, path string, offset int, format string, args ...any) *Error {
	e := errorf(kind, path, offset, format, append([]any{path}, args...)...)
	e.named = true
	return e
}

// systemItemShape is the shape of a system list item, as Harn's errors
// spell it (promptloom's register and rank are documented in options.md).
const systemItemShape = `{content: string, title?: string, position?: "before"|"after", enabled?: bool}`

// systemItemKey reports a key a system list item does not take in Harn's
// words: a removed alias names the key to use, anything else is an unknown
// fragment key; both spell the item's shape.
func systemItemKey(path, key string, offset int, hints map[string]string) *Error {
	if hint, ok := hints[key]; ok {
		return errorf(ErrUnknownKey, path, offset, "`%s` was removed; use `%s` (a fragment is %s)", clip(key), hint, systemItemShape)
	}
	return errorf(ErrUnknownKey, path, offset, "unknown fragment key `%s` (a fragment is %s)", clip(key), systemItemShape)
}

// unknownKey reports a key the item does not take, pointing to the key
// Harn spells when the given one is a known near miss (text for content,
// label for title, ...).
func unknownKey(path, key string, offset int, hints map[string]string) *Error {
	if hint, ok := hints[key]; ok {
		return errorf(ErrUnknownKey, path, offset, "unknown key `%s`; use `%s`", clip(key), hint)
	}
	return errorf(ErrUnknownKey, path, offset, "unknown key `%s`", clip(key))
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func field(path, key string) string {
	key = clip(key)
	if path == "" {
		return key
	}
	return path + "." + key
}

// quote is redact.Quote: redacted, cut to 80 characters, Go-quoted.
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
