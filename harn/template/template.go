package template

import (
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"
	"unicode/utf8"

	"github.com/promptloom/promptloom"
)

// Options bounds and roots a template. The zero value (or nil) is Harn's
// defaults with promptloom's size limit and no file system: a template that
// includes nothing needs nothing else.
type Options struct {
	// Root is the file system includes are read from. The parsed template
	// sits at its top: {{ include "p.prompt" }} reads p.prompt there, and an
	// included file's own includes resolve against its directory. As in
	// Harn, an include may not leave the directory of the file that names
	// it (nor, so, Root). Nil: any include is an error. "@/rel" names a file
	// from Root's top.
	Root fs.FS
	// MaxBytes bounds the template, each included file, the bindings and
	// the rendered output with its spans (past the first 512, each counts
	// as its size in memory) (0: promptloom.DefaultMaxBytes). Past it the error
	// matches promptloom.ErrTooLarge; rendering also stops, with the same
	// error, after as many steps of work as this (a node, a loop turn, an
	// item or 16 bytes through a filter or comparison), so a loop that
	// writes nothing still ends.
	MaxBytes int
	// MaxDepth bounds the nesting of blocks and of expressions (0: Harn's
	// 128). Includes nest at most 32 deep, as in Harn, whatever this says.
	MaxDepth int
}

// includeDepth is Harn's cap on nested includes.
const includeDepth = 32

func (o *Options) limits() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxBytes <= 0 {
		r.MaxBytes = promptloom.DefaultMaxBytes
	}
	if r.MaxDepth <= 0 {
		r.MaxDepth = 128
	}
	return r
}

// Template is a parsed template, ready to render any number of times, from
// any number of goroutines.
type Template struct {
	name  string
	src   string
	nodes []node
	o     Options
	// lastBytes and lastSpans size the next render's buffers.
	lastBytes, lastSpans atomic.Int64
}

// Parse parses src, a template in Harn's language. name is how messages
// and spans name the file ("" for an inline template, whose messages then
// start with "at"); its directory is the directory shown for included
// files. A syntax error is an *Error matching errSyntax, with Harn's text
// and position; a template over the size limit matches
// promptloom.ErrTooLarge.
func Parse(name string, src []byte, o *Options) (*Template, error) {
	t, err := parse(name, src, o)
	return t, withKind(err)
}

func parse(name string, src []byte, o *Options) (*Template, error) {
	opts := o.limits()
	if len(src) > opts.MaxBytes {
		return nil, &Error{Path: name, msg: fmt.Sprintf("template is %d bytes, over the limit of %d", len(src), opts.MaxBytes), kind: promptloom.ErrTooLarge}
	}
	if !utf8.Valid(src) {
		return nil, &Error{Path: name, msg: "stream did not contain valid UTF-8", kind: errSyntax}
	}
	t := &Template{name: name, src: string(src), o: opts}
	nodes, err := parseTemplate(t.src, opts.MaxDepth)
	if err != nil {
		err.Path = name
		return nil, err
	}
	t.nodes = nodes
	return t, nil
}

// Result is a rendered template: the text, where each of its bytes came
// from, and which bindings it read.
type Result struct {
	// Text is the output, byte for byte Harn's.
	Text string
	// Spans cover Text from start to end, in order, without overlap: every
	// output byte is in exactly one span. They are promptloom.Span, so a
	// templated fragment carries the spans of its render as they are: so a
	// manifest can name the bindings behind a fragment and "why" can point
	// at a template position.
	Spans []promptloom.Span
	// Reads are the paths of the caller's bindings the render looked up,
	// sorted, each once; a path whose parent is also read is left out (the
	// parent covers it). A name looked up but not bound is listed too.
	Reads []string
	// Steps is the work the render did, in the steps Options.MaxBytes
	// bounds (a node, a loop turn, an item or 16 bytes through a filter):
	// what a caller rendering many templates under one limit charges to
	// it, with the output's length.
	Steps int
}

// span is a render's promptloom.Span, by its short name.
type span = promptloom.Span

// Kinds of error, matched with errors.Is; the error itself is an *Error.
// The kinds of Error, by the name its Kind gives them.
var (
	// errSyntax: the template does not parse (Harn's parse errors).
	errSyntax = errors.New("template syntax error")
	// errRender: evaluating the template failed (an unknown filter, a bad
	// argument, a loop over a string, a non-string include path).
	errRender = errors.New("template render error")
	// errInclude: an include cannot be followed: it leaves the includer's
	// directory, is missing or unreadable, closes a cycle, or nests past 32
	// levels.
	errInclude = errors.New("template include error")
	// errBindings: the bindings are not one JSON object.
	errBindings = errors.New("template bindings error")
)

// Error is a template error with its position, printed as Harn prints it:
// "<path> at <line>:<col>: <what>", or "at <line>:<col>: <what>" for an
// inline template. A render error inside an included file carries the
// included file's position but, as in Harn, the top template's path; a
// parse error in an included file names that file.
type Error struct {
	// Kind is "syntax" (the template does not parse), "render" (evaluating
	// it failed: an unknown filter, a bad argument, a loop over a string),
	// "include" (an include leaves the includer's directory, is missing,
	// closes a cycle or nests past 32 levels), "bindings" (not one JSON
	// object) or "too_large" (past Options.MaxBytes; the error then also
	// matches promptloom.ErrTooLarge).
	Kind string
	// Path names the template (as Parse was given it; an included file's,
	// for a parse error in it) and Line and Col (1-based) where in it the
	// error is; 0 when it is not at a place (bindings, a size limit).
	Path      string
	Line, Col int
	msg       string // what is wrong, in Harn's words
	kind      error
}

// kindNames names the kinds.
var kindNames = map[error]string{errSyntax: "syntax", errRender: "render", errInclude: "include",
	errBindings: "bindings", promptloom.ErrTooLarge: "too_large"}

// withKind sets the Kind of the Error err is, if it is one.
func withKind(err error) error {
	var e *Error
	if errors.As(err, &e) && e.Kind == "" {
		e.Kind = kindNames[e.kind]
	}
	return err
}

func (e *Error) Error() string {
	p := ""
	if e.Path != "" {
		p = e.Path + " "
	}
	if e.Line == 0 {
		return p + e.msg
	}
	return fmt.Sprintf("%sat %d:%d: %s", p, e.Line, e.Col, e.msg)
}

// Unwrap returns the kind's sentinel: promptloom.ErrTooLarge for an input
// or output over its limit.
func (e *Error) Unwrap() error { return e.kind }

// Render renders the template with bindings, a JSON object (empty or null:
// no bindings). Integers stay integers and numbers with a fraction or an
// exponent are floats, as serde_json reads them for Harn.
func (t *Template) Render(bindings []byte) (*Result, error) {
	r, err := t.renderJSON(bindings)
	return r, withKind(err)
}

func (t *Template) renderJSON(bindings []byte) (*Result, error) {
	if len(bindings) > t.o.MaxBytes {
		return nil, &Error{msg: fmt.Sprintf("bindings are %d bytes, over the limit of %d", len(bindings), t.o.MaxBytes), kind: promptloom.ErrTooLarge}
	}
	b, err := decodeBindings(bindings)
	if err != nil {
		return nil, &Error{msg: "bindings: " + err.Error(), kind: errBindings}
	}
	return t.render(b)
}
