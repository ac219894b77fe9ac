package json

import (
	"bufio"
	"io"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// AppendIndent appends src, one valid JSON value, laid out as
// encoding/json's Indent lays it out: each item and member on a line of its
// own, beginning with prefix and one indent per level of nesting, a space
// after each colon, an empty array or object as [] or {}; strings are
// copied as they are. The first line is not prefixed: that is the caller's
// place in its own document.
func AppendIndent(dst, src []byte, prefix, indent string) []byte {
	s := unsafe.String(unsafe.SliceData(src), len(src))
	newline := func(depth int) {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	needIndent := false // an array or object just opened
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			newline(depth)
		}
		switch c {
		case '"':
			end := stringEnd(s, i)
			dst = append(dst, s[i:end]...)
			i = end - 1
		case '{', '[':
			needIndent = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline(depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				newline(depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// Writer streams one JSON object, a member at a time and an array's items
// one at a time, in exactly the bytes encoding/json's Encoder writes for the
// whole value with SetIndent("", "  ") and SetEscapeHTML(false), final
// newline included: a document of a million rows is written without being
// held whole. Members are written by Member and then one value (String,
// Int, Raw, Value, or an array: BeginArray, then Item and one value per
// item, then EndArray); Close ends the object. The first write error is
// kept, and returned by Close.
type Writer struct {
	w       *bufio.Writer
	scratch []byte
	members int
	items   int
	depth   int // of the value being written: 1 a member's, 2 an item's
	err     error
}

// NewWriter begins an object on w.
func NewWriter(w io.Writer) *Writer {
	jw := &Writer{w: bufio.NewWriterSize(w, 64<<10), depth: 1}
	jw.w.WriteByte('{')
	return jw
}

// Member begins the next member of the object.
func (w *Writer) Member(key string) {
	if w.members > 0 {
		w.w.WriteByte(',')
	}
	w.members++
	w.scratch = AppendStdString(append(w.scratch[:0], "\n  "...), key)
	w.w.Write(append(w.scratch, ':', ' '))
}

// String writes a string value, as AppendStdString writes it, a piece at a
// time: a prompt of megabytes is never held twice. Pieces end before a
// byte that starts a character, where escaping one piece after another
// gives what escaping the whole gives.
func (w *Writer) String(s string) {
	const piece = 32 << 10
	w.w.WriteByte('"')
	for len(s) > 0 {
		n := min(len(s), piece)
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		w.scratch = appendStdEscaped(w.scratch[:0], s[:n])
		w.w.Write(w.scratch)
		s = s[n:]
	}
	w.w.WriteByte('"')
}

// Int writes an integer value.
func (w *Writer) Int(n int) {
	w.w.Write(strconv.AppendInt(w.scratch[:0], int64(n), 10))
}

// Raw writes raw, one valid JSON value, laid out at its depth; nil is
// null, as encoding/json writes a nil json.RawMessage.
func (w *Writer) Raw(raw []byte) {
	if raw == nil {
		w.w.WriteString("null")
		return
	}
	w.scratch = AppendIndent(w.scratch[:0], raw, "    "[:2*w.depth], "  ")
	w.w.Write(w.scratch)
}

// Value writes v as encoding/json marshals it (without HTML escaping),
// laid out at its depth.
func (w *Writer) Value(v any) {
	raw, err := MarshalRaw(v)
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.Raw(raw)
}

// Append writes b as it is: a value the caller laid out itself for its
// depth (an item's lines after the first indented by six spaces).
func (w *Writer) Append(b []byte) { w.w.Write(b) }

// BeginArray begins an array value; its items are written by Item and a
// value each.
func (w *Writer) BeginArray() {
	w.w.WriteByte('[')
	w.items, w.depth = 0, 2
}

// Item begins the next item of the array.
func (w *Writer) Item() {
	if w.items > 0 {
		w.w.WriteByte(',')
	}
	w.items++
	w.w.WriteString("\n    ")
}

// EndArray ends the array, which must have had an item: an empty one is
// written as a value ([] or null).
func (w *Writer) EndArray() {
	w.w.WriteString("\n  ]")
	w.depth = 1
}

// Close ends the object and flushes it, returning the first error of any
// write.
func (w *Writer) Close() error {
	if w.members == 0 {
		w.w.WriteString("}\n")
	} else {
		w.w.WriteString("\n}\n")
	}
	if err := w.w.Flush(); w.err == nil {
		w.err = err
	}
	return w.err
}
