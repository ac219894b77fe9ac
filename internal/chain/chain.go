// Package chain is what the transcript's writer (package journal) and its
// reader (package transcript) share of its format: the kinds of line, the
// chain's hashes, a checkpoint's text and origin, a call's leaf, and the
// redacted content hash of a retained value (docs/transcript.md). Neither
// writes a line the other could read another way.
package chain

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"

	"golang.org/x/mod/sumdb/tlog"
)

// The kinds of a transcript line (docs/transcript.md).
const (
	KindSystemPrompt    = "system_prompt"
	KindContextManifest = "context_manifest"
	KindRequest         = "provider_call_request"
	KindResponse        = "provider_call_response"
	KindError           = "provider_call_error"
	KindOpen            = "journal_open"
	KindClose           = "journal_close"
	KindAttempt         = "provider_call_attempt"
	KindRefused         = "provider_call_refused"
	// KindCheckpoint is a line holding a signed note over the chain up to
	// the line before it.
	KindCheckpoint = "journal_checkpoint"
)

// ServedContextSchema names the receipt a request carries.
const ServedContextSchema = "harn.llm.served_context.v1"

// Genesis is the prev of a transcript's first line: "blake3:" and 64 zeros.
const Genesis = "blake3:0000000000000000000000000000000000000000000000000000000000000000"

// LineHash is the chain hash of a transcript line: BLAKE3 over its exact
// bytes, without the newline that ends it, and not redacted (the line is
// what is hashed, as written). The next line's "prev" holds it.
func LineHash(line []byte) string { return digest.Bytes(line).String() }

// JSONHash is the content hash of a JSON value, Harn's
// stable_redacted_json_hash: BLAKE3 over its canonical encoding after
// Harn's redact_json (every string value redacted, and the value of a
// credential-like key replaced whole: redact.JSON). Empty JSON hashes as
// null.
func JSONHash(raw []byte) (string, error) {
	if len(raw) == 0 {
		raw = []byte("null")
	}
	b, err := redact.JSON(raw)
	if err != nil {
		return "", err
	}
	return digest.Bytes(b).String(), nil
}

// Quote is s as a JSON string, as canonical JSON writes it.
func Quote(s string) string {
	// Sized for a few escapes, so a long text is not copied as it grows,
	// and never written again, so the string is its bytes.
	b := pjson.AppendString(make([]byte, 0, len(s)+len(s)/16+2), s)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// IsNil reports whether v is nil or a nil pointer or function: an
// argument no call can use.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Func:
		return r.IsNil()
	}
	return false
}

// RuleLike reports whether s is a code as a rule is written: lowercase
// ASCII letters, digits and _, starting with a letter, at most 64 bytes.
func RuleLike(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// LineTooLong is a transcript line longer than the longest a reader or
// writer holds; it matches promptloom.ErrTooLarge. Line is 0 when the line
// was read from the end of a file, backwards.
type LineTooLong struct{ Line, Limit int }

func (e *LineTooLong) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("journal: the last line is longer than %d bytes", e.Limit)
	}
	return fmt.Sprintf("journal: line %d is longer than %d bytes", e.Line, e.Limit)
}

// Is matches promptloom.ErrTooLarge.
func (e *LineTooLong) Is(t error) bool { return t == promptloom.ErrTooLarge }

// CheckpointHeader is the first line of a checkpoint note's text in the
// format before C2SP's, which a verifier still reads.
const CheckpointHeader = "promptloom transcript checkpoint v1"

// Checkpoint is what a checkpoint note says.
type Checkpoint struct {
	Origin  string // "" in the older format, which names the session instead
	Session string
	Lines   int64  // the seq of the line before the checkpoint's
	Head    string // that line's chain hash
	Calls   int64  // the size of the session's tree of calls
	Root    tlog.Hash
}

// Text is the note text of c.
func (c Checkpoint) Text() string {
	if c.Origin == "" {
		return fmt.Sprintf("%s\nsession %s\nlines %d\nhead %s\ncalls %d\nroot %s\n",
			CheckpointHeader, Quote(c.Session), c.Lines, c.Head, c.Calls, c.Root)
	}
	return fmt.Sprintf("%s\n%d\n%s\nlines %d\nhead %s\n", c.Origin, c.Calls, c.Root, c.Lines, c.Head)
}

// Origin is the origin line of a session's checkpoints: the signer's key
// name, the session id with every byte outside RFC 3986's unreserved set
// percent-encoded, and the first 16 hex digits of the BLAKE3 chain hash of
// the session's journal_open line, slash-separated. The open line's hash
// makes it one run's: another run with the same key and session id opens
// with another line (another time, another place in a chain), while a run
// cut back and continued, or forked, keeps its origin, which is what lets
// a witness or an auditor catch it.
func Origin(keyName, session, openHash string) string {
	var b strings.Builder
	b.WriteString(keyName)
	b.WriteByte('/')
	for i := 0; i < len(session); i++ {
		c := session[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	b.WriteByte('/')
	hex, _ := strings.CutPrefix(openHash, "blake3:")
	b.WriteString(hex[:min(16, len(hex))])
	return b.String()
}

// ParseOrigin splits an origin as Origin writes it into the key name, the
// session and the open line's hash prefix.
func ParseOrigin(o string) (keyName, session, open string, ok bool) {
	rest, open, ok1 := cutLast(o)
	keyName, esc, ok2 := cutLast(rest)
	if !ok1 || !ok2 || keyName == "" || len(open) != 16 || strings.Trim(open, "0123456789abcdef") != "" {
		return "", "", "", false
	}
	sess, err := url.PathUnescape(esc)
	if err != nil || Origin(keyName, sess, open) != o {
		return "", "", "", false
	}
	return keyName, sess, open, true
}

func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// ParseCheckpoint reads a checkpoint note's text, which must be exactly as
// Text writes it (no other spelling of a number, hash or string), in
// either format. The origin of a C2SP checkpoint is read as it stands;
// the verifier compares it with the one it expects.
func ParseCheckpoint(text string) (Checkpoint, error) {
	var c Checkpoint
	bad := errors.New("not a promptloom checkpoint (docs/transcript.md)")
	ls := strings.Split(text, "\n")
	field := func(i int, name string) (string, error) {
		v, ok := strings.CutPrefix(ls[i], name+" ")
		if !ok {
			return "", bad
		}
		return v, nil
	}
	var err error
	var lines, calls, root string
	switch {
	case len(ls) == 7 && ls[0] == CheckpointHeader && ls[6] == "":
		var s string
		if s, err = field(1, "session"); err == nil {
			// Text writes the session quoted: read it back as JSON, and
			// Text, below, holds it to that one spelling.
			if err = pjson.Check([]byte(s), nil); err == nil && len(s) > 1 && s[0] == '"' {
				c.Session = pjson.Unquote(s)
			} else if err == nil {
				err = bad
			}
		}
		if err == nil {
			lines, err = field(2, "lines")
		}
		if err == nil {
			c.Head, err = field(3, "head")
		}
		if err == nil {
			calls, err = field(4, "calls")
		}
		if err == nil {
			root, err = field(5, "root")
		}
	case len(ls) == 6 && ls[5] == "":
		c.Origin, calls, root = ls[0], ls[1], ls[2]
		var ok bool
		if _, c.Session, _, ok = ParseOrigin(c.Origin); !ok {
			return Checkpoint{}, fmt.Errorf("origin %q is not KEY/SESSION/OPEN as promptloom writes it (docs/transcript.md)", c.Origin)
		}
		if lines, err = field(3, "lines"); err == nil {
			c.Head, err = field(4, "head")
		}
	default:
		return c, bad
	}
	if err == nil {
		c.Lines, err = strconv.ParseInt(lines, 10, 64)
	}
	if err == nil {
		c.Calls, err = strconv.ParseInt(calls, 10, 64)
	}
	if err == nil {
		c.Root, err = tlog.ParseHash(root)
	}
	if err != nil || c.Text() != text {
		return Checkpoint{}, bad
	}
	return c, nil
}

// CallRecord is a call's record in its session's tree: the chain hashes
// of its request line and outcome line, each followed by a newline. Its
// leaf (tlog.RecordHash: SHA-256 of a zero byte and the record) binds
// every byte of both lines.
func CallRecord(requestHash, outcomeHash string) []byte {
	return []byte(requestHash + "\n" + outcomeHash + "\n")
}

// LeafHash is the leaf of a call's record.
func LeafHash(requestHash, outcomeHash string) tlog.Hash {
	return tlog.RecordHash(CallRecord(requestHash, outcomeHash))
}

// Hashes are a tree's stored hashes, in tlog.StoredHashIndex order.
type Hashes []tlog.Hash

// StoredHashes are the stored hashes of the tree of leaves.
func StoredHashes(leaves []tlog.Hash) (Hashes, error) {
	h := make(Hashes, 0, 2*len(leaves))
	for i, leaf := range leaves {
		more, err := tlog.StoredHashesForRecordHash(int64(i), leaf, h)
		if err != nil {
			return nil, err
		}
		h = append(h, more...)
	}
	return h, nil
}

// ReadHashes is tlog.HashReader's.
func (h Hashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(h)) {
			return nil, fmt.Errorf("stored hash %d of %d", x, len(h))
		}
		out[i] = h[x]
	}
	return out, nil
}

// Served is the system text a provider is sent: the body's system channel
// (read as provider p) when the body is given and readable, else sent,
// else system. The writer records it, and replay keys a call by it.
func Served(body []byte, p payload.Provider, sent *string, system string) string {
	if body != nil {
		if c, err := SystemChannel(body, p); err == nil {
			return c.Text
		}
	}
	if sent != nil {
		return *sent
	}
	return system
}

// SystemChannel is the system channel of body read as p.
func SystemChannel(body []byte, p payload.Provider) (*payload.Channel, error) {
	r, err := payload.Read(body, p)
	if err != nil {
		return nil, err
	}
	return r.System()
}
