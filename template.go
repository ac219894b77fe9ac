package promptloom

import "github.com/promptloom/promptloom/digest"

// Template says how a fragment's body was rendered from a template, when
// it was (promptloom's extension of the options: a system item,
// _system_fragments item or profile fragment may give a template and
// bindings instead of a body). manifest.New records File, Digest, Includes
// and Bindings in the fragment's row, so a manifest names the bindings
// behind every templated byte; Spans stay here, for explain and "why".
// Its JSON is that manifest row member.
type Template struct {
	// File is the template file as the options name it, "" for an inline
	// template.
	File string `json:"file,omitempty"`
	// Digest is the BLAKE3 digest of the template's source, redacted as
	// every digest is (digest.Of).
	Digest digest.Digest `json:"digest"`
	// Includes are the files the render included, each by the name the
	// spans give it, with the digest of its source.
	Includes map[string]digest.Digest `json:"includes,omitempty"`
	// Bindings are the bindings the render read, each path as Span.Path
	// spells it (user.name, items[2], config["api-key"]) with the BLAKE3
	// digest of its value's canonical JSON after Harn's redact_json; a path
	// bound to nothing has the digest of no bytes (digest.Bytes(nil)). A
	// path whose parent was read is covered by the parent's.
	Bindings map[string]digest.Digest `json:"bindings"`
	// Spans cover the rendered text, in order and without overlap, with
	// offsets into the fragment's Body: where each byte came from. A
	// heading the options add (a system item's title) is in no span.
	Spans []Span `json:"-"`
}

// Span says where the bytes [Start, End) of a templated body came from:
// template text at a file, line and column, or the value of a binding
// (its path and the filters applied). harn/template's spans are these.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
	// Kind is "text" (template text, a raw block, or a legacy {{name}}
	// bound to nothing and written back), "binding" (the value of a
	// binding, possibly filtered), "value" (a value computed from no
	// binding: a literal, loop.index, a comparison) or "section" (what a
	// {{ section }} adds around its body).
	Kind string `json:"kind"`
	// File is the template the bytes come from: the template's own name
	// ("" inline), or an included file as Harn names it (relative to the
	// includer's directory).
	File string `json:"file,omitempty"`
	// Line and Col (1-based, Col in characters) are where the text starts,
	// or the directive that wrote the bytes.
	Line int `json:"line"`
	Col  int `json:"col"`
	// Path is the binding's path (Kind "binding"), as it was read:
	// user.name, items[2], config["api-key"]; a loop variable is named by
	// the item it stood for.
	Path string `json:"path,omitempty"`
	// Filters are the filters applied to the binding, in order (shared
	// between spans: do not modify).
	Filters []string `json:"filters,omitempty"`
	// IncludeLine and IncludeCol, for bytes from an included file (at any
	// depth), are where in the template itself the include that brought
	// it in is; 0 for the template's own bytes.
	IncludeLine int `json:"include_line,omitempty"`
	IncludeCol  int `json:"include_col,omitempty"`
}
