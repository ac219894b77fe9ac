package request

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"
)

// blockWriter writes a part's redacted canonical JSON, the bytes its
// digest is taken over, into one buffer that the next part reuses.
//
// redact.JSON reads a block into a tree and writes the tree back; most
// blocks need far less: a string with no escape is already canonical as
// written, and one the secret catalog leaves alone can be copied whole;
// members already in key order stay where they are. The writer walks the
// block once, copying what it can, and gives up (so the caller falls back
// to redact.JSON, which decides) on anything whose treatment it would
// otherwise have to repeat: a key that may be credential-like, a key
// given twice, half a surrogate pair, a number past a double's range, or
// nesting deeper than maxBlockDepth. It checks no syntax: a part is a
// slice of a body payload.Read has read, so well-formed UTF-8 JSON.
type blockWriter struct {
	buf     []byte
	members []member // the members of the open objects, innermost last
	scratch []byte   // room for reordering an object's members
	// wrote is whether the writer wrote the last part; if it did, text is
	// the value, as written, of the part's member named text ("" for
	// none), which its tokens are counted over.
	wrote bool
	text  string
	// mark is the member by which the request's provider marks a cache
	// breakpoint on a block (wire.MarkKey), left out of a marked part.
	mark string
}

// member is one member of an open object: its decoded key and where its
// output (key, colon and value) lies in buf.
type member struct {
	key        string
	start, end int
}

// maxBlockDepth bounds the nesting the writer walks: it recurses, and an
// object whose keys are out of order is copied once more for each object
// around it, so a deeper block goes to redact.JSON, linear at any depth.
const maxBlockDepth = 64

// digestInput returns what a part's digest is taken over: Harn's
// redact_json of the part without its cache mark, canonical. The bytes
// are valid until the next call.
func (w *blockWriter) digestInput(p payload.Part) ([]byte, error) {
	if w.wrote = w.write(p); w.wrote {
		return w.buf, nil
	}
	return redact.JSON(withoutMark(p, w.mark))
}

// write writes the part into buf, or reports false where it leaves the
// part to redact.JSON.
func (w *blockWriter) write(p payload.Part) bool {
	s := unsafe.String(unsafe.SliceData(p.Raw), len(p.Raw))
	w.buf, w.members, w.text = w.buf[:0], w.members[:0], ""
	if s == "" {
		return false
	}
	drop := ""
	if p.Cache != nil {
		drop = w.mark
	}
	end, ok := w.value(s, skipSpace(s, 0), 0, drop)
	return ok && skipSpace(s, end) == len(s)
}

// countedText is what a part's tokens are counted over: the text of a
// text block or string (as its JSON string token: quoted), the JSON of
// anything else. p is the part digestInput was given last.
func (w *blockWriter) countedText(p payload.Part) (string, bool) {
	raw := unsafe.String(unsafe.SliceData(p.Raw), len(p.Raw))
	if raw != "" && raw[0] == '"' {
		return raw, true
	}
	switch p.Type {
	case "text", "input_text", "output_text", "":
		// ("": a Gemini part)
		v := w.text
		if !w.wrote {
			v, _ = field(raw, "text")
		}
		if v != "" && v[0] == '"' {
			return v, true
		}
	}
	return raw, false
}

// value writes the value at s[i] and returns where it ends. An object's
// member named drop (when not "") is left out.
func (w *blockWriter) value(s string, i, depth int, drop string) (int, bool) {
	switch c := s[i]; c {
	case '"':
		return w.str(s, i)
	case '{':
		return w.object(s, i, depth, drop)
	case '[':
		return w.array(s, i, depth)
	case 't':
		w.buf = append(w.buf, "true"...)
		return i + 4, true
	case 'f':
		w.buf = append(w.buf, "false"...)
		return i + 5, true
	case 'n':
		w.buf = append(w.buf, "null"...)
		return i + 4, true
	}
	return w.number(s, i)
}

// str writes a string value as redacted: the token as written when it
// has no escape (no control character, quote or backslash can then be in
// it, so it is already serde_json's spelling) and the catalog finds no
// secret in it.
func (w *blockWriter) str(s string, i int) (int, bool) {
	end := stringEnd(s, i)
	tok := s[i:end]
	text := tok[1 : len(tok)-1]
	escaped := strings.IndexByte(text, '\\') >= 0
	if escaped {
		if halfSurrogate(tok) {
			return end, false
		}
		text = pjson.Unquote(tok)
	}
	red := redact.String(text)
	if !escaped && red == text {
		w.buf = append(w.buf, tok...)
	} else {
		w.buf = pjson.AppendString(w.buf, red)
	}
	return end, true
}

// number writes a number as serde_json reads then writes it: an integer
// that fits in 64 bits as written, anything else as a double.
func (w *blockWriter) number(s string, i int) (int, bool) {
	end := i
	for end < len(s) && strings.IndexByte("+-.0123456789Ee", s[end]) >= 0 {
		end++
	}
	tok := s[i:end]
	if exactInteger(tok) {
		w.buf = append(w.buf, tok...)
		return end, true
	}
	f, _ := strconv.ParseFloat(tok, 64)
	if math.IsInf(f, 0) {
		return end, false // past a double's range: redact.JSON refuses it
	}
	w.buf = pjson.AppendFloat(w.buf, f)
	return end, true
}

// exactInteger reports whether a number token is an integer literal that
// serde_json reads exactly: it fits in a u64, or an i64 when negative
// ("-0" is the double -0.0).
func exactInteger(tok string) bool {
	if strings.ContainsAny(tok, ".eE") || tok == "-0" {
		return false
	}
	var err error
	if tok[0] == '-' {
		_, err = strconv.ParseInt(tok, 10, 64)
	} else {
		_, err = strconv.ParseUint(tok, 10, 64)
	}
	return err == nil
}

func (w *blockWriter) array(s string, i, depth int) (int, bool) {
	if depth >= maxBlockDepth {
		return i, false
	}
	w.buf = append(w.buf, '[')
	i = skipSpace(s, i+1)
	if s[i] == ']' {
		w.buf = append(w.buf, ']')
		return i + 1, true
	}
	for n := 0; ; n++ {
		if n > 0 {
			w.buf = append(w.buf, ',')
		}
		var ok bool
		if i, ok = w.value(s, i, depth+1, ""); !ok {
			return i, false
		}
		i = skipSpace(s, i)
		if s[i] == ']' {
			w.buf = append(w.buf, ']')
			return i + 1, true
		}
		i = skipSpace(s, i+1) // the comma
	}
}

// object writes an object's members in the order of their keys' bytes,
// copying them as written when they are in it already.
func (w *blockWriter) object(s string, i, depth int, drop string) (int, bool) {
	if depth >= maxBlockDepth {
		return i, false
	}
	base := len(w.members)
	defer func() { w.members = w.members[:base] }()
	w.buf = append(w.buf, '{')
	open := len(w.buf)
	i = skipSpace(s, i+1)
	for s[i] != '}' {
		kend := stringEnd(s, i)
		tok := s[i:kend]
		key := tok[1 : len(tok)-1]
		escaped := strings.IndexByte(key, '\\') >= 0
		if escaped {
			if halfSurrogate(tok) {
				return i, false
			}
			key = pjson.Unquote(tok)
		}
		if mayBeSensitive(key) {
			return i, false
		}
		i = skipSpace(s, skipSpace(s, kend)+1) // past the colon
		before := len(w.buf)
		start := before
		if len(w.members) > base {
			w.buf = append(w.buf, ',')
			start++
		}
		if escaped {
			w.buf = pjson.AppendString(w.buf, key)
		} else {
			w.buf = append(w.buf, tok...)
		}
		w.buf = append(w.buf, ':')
		at := i
		var ok bool
		if i, ok = w.value(s, i, depth+1, ""); !ok {
			return i, false
		}
		if depth == 0 && key == "text" {
			w.text = s[at:i]
		}
		if drop != "" && key == drop {
			w.buf = w.buf[:before]
		} else {
			w.members = append(w.members, member{key: key, start: start, end: len(w.buf)})
		}
		if i = skipSpace(s, i); s[i] == ',' {
			i = skipSpace(s, i+1)
		}
	}
	ms := w.members[base:]
	inOrder := true
	for j := 1; j < len(ms) && inOrder; j++ {
		inOrder = ms[j-1].key < ms[j].key
	}
	if !inOrder {
		w.scratch = append(w.scratch[:0], w.buf[open:]...)
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		w.buf = w.buf[:open]
		for j, m := range ms {
			if j > 0 {
				if m.key == ms[j-1].key {
					return i, false // given twice: redact.JSON refuses it
				}
				w.buf = append(w.buf, ',')
			}
			w.buf = append(w.buf, w.scratch[m.start-open:m.end-open]...)
		}
	}
	w.buf = append(w.buf, '}')
	return i + 1, true
}

// sensitiveWords are what a credential-like key holds once lower-cased
// without '_' and '-' (Harn's field_is_sensitive matches a list of such
// names and the suffixes token, secret, password and apikey; each of them
// holds one of these).
var sensitiveWords = []string{"token", "secret", "passw", "apikey", "auth", "cookie", "privatekey"}

// mayBeSensitive reports whether a key may be one whose value redact.JSON
// replaces whole: it is true for every such key, and for some others, so
// the writer leaves the decision to redact.JSON.
func mayBeSensitive(key string) bool {
	switch key {
	case "type", "text", "name", "id", "input", "content", "role", "description", "properties",
		"required", "items", "input_schema", "tool_use_id", "cache_control", "is_error":
		// The keys most blocks are made of, known at once to hold none of
		// the words.
		return false
	}
	return holdsSensitiveWord(key)
}

// holdsSensitiveWord reports whether key, lower-cased without '_' and
// '-', holds one of sensitiveWords.
func holdsSensitiveWord(key string) bool {
	var room [64]byte
	if len(key) > len(room) {
		return true
	}
	compact := room[:0]
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '_' || c == '-' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		compact = append(compact, c)
	}
	lower := unsafe.String(unsafe.SliceData(compact), len(compact))
	for _, word := range sensitiveWords {
		if strings.Contains(lower, word) {
			return true
		}
	}
	return false
}

// halfSurrogate reports whether a string token holds a \u escape of a
// UTF-16 surrogate: the writer leaves such a string (half a pair alone is
// refused, a whole pair is rare) to redact.JSON.
func halfSurrogate(tok string) bool {
	for i := 0; i < len(tok)-1; i++ {
		if tok[i] != '\\' {
			continue
		}
		i++
		if tok[i] == 'u' && i+2 < len(tok) && (tok[i+1] == 'd' || tok[i+1] == 'D') && strings.IndexByte("89abcdefABCDEF", tok[i+2]) >= 0 {
			return true
		}
	}
	return false
}

// skipSpace returns the offset of the first byte at or after i that is not
// JSON white space.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the offset just past the string that opens at s[i]:
// the first quote not after an odd run of backslashes.
func stringEnd(s string, i int) int {
	for j := i + 1; ; {
		q := j + strings.IndexByte(s[j:], '"')
		n := 0
		for p := q - 1; s[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}
