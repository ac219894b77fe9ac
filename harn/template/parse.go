package template

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/promptloom/promptloom/internal/spans"
)

// The parsed template, as Harn's parser builds it.
// node is one piece of a parsed template: text, an expression, a block.
// Each knows where it starts, for the errors it gives.
type node interface{ start() pos }

// pos is where a node starts in its file: 1-based line, and column in
// characters.
type pos struct{ line, col int }

func (p pos) start() pos { return p }

type (
	// textNode is literal text (or a raw block's content); at, line and col
	// are where it starts in its file.
	textNode struct {
		s  string
		at int
		pos
	}
	exprNode struct {
		x expr
		pos
	}
	// bareNode is a legacy bare {{ident}}: its value, or "{{ident}}" back
	// when the name is bound to nothing.
	bareNode struct {
		ident string
		pos
	}
	ifNode struct {
		branches []ifBranch
		els      []node
		pos
	}
	forNode struct {
		val, key string
		iter     expr
		body     []node
		empty    []node
		pos
	}
	includeNode struct {
		path expr
		with []binding
		pos
	}
	sectionNode struct {
		name string
		args []binding
		body []node
		pos
	}
)

type ifBranch struct {
	cond      expr
	line, col int
	body      []node
}

// binding is one name: expr pair of include's with { } or of a section's
// arguments.
type binding struct {
	name string
	x    expr
}

// sections are the names {{ section "..." }} accepts (Harn's vocabulary).
var sections = []string{"task", "examples", "output_format", "tools", "thinking_scaffold", "chain_of_thought", "system_framing"}

type parser struct {
	toks     []token
	pos      int
	depth    int
	maxDepth int
}

func parseTemplate(src string, maxDepth int) ([]node, *Error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, maxDepth: maxDepth}
	return p.block(nil)
}

func (p *parser) peek() (token, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return token{}, false
}

func (p *parser) errAt(line, col int, msg string) *Error {
	return &Error{Line: line, Col: col, msg: msg, kind: errSyntax}
}

// block parses nodes up to a directive whose first word is one of stops
// (left unread), or the end.
func (p *parser) block(stops []string) ([]node, *Error) {
	if p.depth >= p.maxDepth {
		line, col := 1, 1
		if t, ok := p.peek(); ok && t.kind == tokDirective {
			line, col = t.line, t.col
		}
		return nil, p.errAt(line, col, fmt.Sprintf("template nesting depth exceeded (%d levels)", p.maxDepth))
	}
	p.depth++
	defer func() { p.depth-- }()
	var out []node
	for {
		t, ok := p.peek()
		if !ok {
			return out, nil
		}
		switch t.kind {
		case tokText:
			s, at, line, col := t.s, t.at, t.line, t.col
			if t.trimLeft {
				rest := trimLeadingLine(s)
				line, col = spans.Advance(line, col, s[:len(s)-len(rest)])
				at += len(s) - len(rest)
				s = rest
			}
			if t.trimRight {
				s = trimTrailingLine(s)
			}
			if s != "" {
				out = append(out, &textNode{s: s, at: at, pos: pos{line, col}})
			}
			p.pos++
			continue
		case tokRaw:
			if t.s != "" {
				out = append(out, &textNode{s: t.s, at: t.at, pos: pos{t.line, t.col}})
			}
			p.pos++
			continue
		}
		body, line, col := t.s, t.line, t.col
		word := firstWord(body)
		for _, s := range stops {
			if word == s {
				return out, nil
			}
		}
		p.pos++
		switch {
		case body == "end":
			return nil, p.errAt(line, col, "unexpected `{{ end }}`")
		case word == "endsection":
			return nil, p.errAt(line, col, "unexpected `{{ endsection }}`")
		case body == "else":
			return nil, p.errAt(line, col, "unexpected `{{ else }}`")
		case word == "elif":
			return nil, p.errAt(line, col, "unexpected `{{ elif }}`")
		}
		var n node
		var err *Error
		switch {
		case word == "if":
			var cond expr
			if cond, err = parseExpr(strings.TrimSpace(body[2:]), line, col, p.maxDepth); err == nil {
				n, err = p.ifBlock(cond, line, col)
			}
		case word == "for":
			n, err = p.forBlock(strings.TrimSpace(body[3:]), line, col)
		case word == "include":
			n, err = p.include(strings.TrimSpace(body[7:]), line, col)
		case word == "section":
			n, err = p.section(strings.TrimSpace(body[7:]), line, col)
		case isIdent(body):
			n = &bareNode{ident: body, pos: pos{line, col}}
		default:
			var x expr
			if x, err = parseExpr(body, line, col, p.maxDepth); err == nil {
				n = &exprNode{x: x, pos: pos{line, col}}
			}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
}

// closer returns the directive the last block stopped at, reading it.
func (p *parser) closer() (token, bool) {
	t, ok := p.peek()
	if ok {
		p.pos++
	}
	return t, ok
}

func (p *parser) ifBlock(cond expr, line, col int) (node, *Error) {
	n := &ifNode{pos: pos{line, col}}
	cur := ifBranch{cond: cond, line: line, col: col}
	for {
		body, err := p.block([]string{"end", "else", "elif"})
		if err != nil {
			return nil, err
		}
		cur.body = body
		n.branches = append(n.branches, cur)
		t, ok := p.closer()
		if !ok {
			return nil, p.errAt(line, col, "`{{ if }}` missing matching `{{ end }}`")
		}
		switch firstWord(t.s) {
		case "end":
			return n, nil
		case "else":
			els, err := p.block([]string{"end"})
			if err != nil {
				return nil, err
			}
			if end, ok := p.peek(); !ok || end.s != "end" {
				return nil, p.errAt(t.line, t.col, "`{{ else }}` missing matching `{{ end }}`")
			}
			p.pos++
			n.els = els
			return n, nil
		default: // elif
			c, err := parseExpr(strings.TrimSpace(t.s[4:]), t.line, t.col, p.maxDepth)
			if err != nil {
				return nil, err
			}
			cur = ifBranch{cond: c, line: t.line, col: t.col}
		}
	}
}

func (p *parser) forBlock(spec string, line, col int) (node, *Error) {
	head, iterSrc, ok := splitKeyword(spec, " in ")
	if !ok {
		return nil, p.errAt(line, col, "expected `in` in for-loop")
	}
	head, iterSrc = strings.TrimSpace(head), strings.TrimSpace(iterSrc)
	n := &forNode{pos: pos{line, col}}
	if a, b, two := strings.Cut(head, ","); two {
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		if !isIdent(a) || !isIdent(b) {
			return nil, p.errAt(line, col, "invalid for-loop variables")
		}
		n.key, n.val = a, b
	} else {
		if !isIdent(head) {
			return nil, p.errAt(line, col, "invalid for-loop variable")
		}
		n.val = head
	}
	iter, err := parseExpr(iterSrc, line, col, p.maxDepth)
	if err != nil {
		return nil, err
	}
	n.iter = iter
	if n.body, err = p.block([]string{"end", "else"}); err != nil {
		return nil, err
	}
	t, ok := p.closer()
	if !ok {
		return nil, p.errAt(line, col, "`{{ for }}` missing matching `{{ end }}`")
	}
	if firstWord(t.s) == "else" {
		if n.empty, err = p.block([]string{"end"}); err != nil {
			return nil, err
		}
		if end, ok := p.peek(); !ok || end.s != "end" {
			return nil, p.errAt(line, col, "`{{ else }}` missing matching `{{ end }}`")
		}
		p.pos++
	}
	return n, nil
}

func (p *parser) include(spec string, line, col int) (node, *Error) {
	pathSrc, withSrc, hasWith := splitKeyword(spec, " with ")
	if !hasWith {
		pathSrc = spec
	}
	path, err := parseExpr(strings.TrimSpace(pathSrc), line, col, p.maxDepth)
	if err != nil {
		return nil, err
	}
	n := &includeNode{path: path, pos: pos{line, col}}
	if !hasWith {
		return n, nil
	}
	s := strings.TrimSpace(withSrc)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return nil, p.errAt(line, col, "expected `{ ... }` after `with`")
	}
	for _, chunk := range splitTopLevel(s[1:len(s)-1], ',') {
		chunk = strings.TrimSpace(chunk)
		if chunk == "" {
			continue
		}
		k, v, ok := splitOnceTopLevel(chunk, ':')
		if !ok {
			return nil, p.errAt(line, col, "expected `key: value` in include bindings")
		}
		if k = strings.TrimSpace(k); !isIdent(k) {
			return nil, p.errAt(line, col, "invalid include binding key")
		}
		x, err := parseExpr(strings.TrimSpace(v), line, col, p.maxDepth)
		if err != nil {
			return nil, err
		}
		n.with = append(n.with, binding{k, x})
	}
	return n, nil
}

func (p *parser) section(spec string, line, col int) (node, *Error) {
	name, rest, err := sectionName(spec, line, col)
	if err != nil {
		return nil, err
	}
	known := false
	for _, s := range sections {
		known = known || s == name
	}
	if !known {
		return nil, p.errAt(line, col, fmt.Sprintf("unknown template section `%s`", name))
	}
	n := &sectionNode{name: name, pos: pos{line, col}}
	for _, chunk := range splitSectionArgs(rest) {
		chunk = strings.Trim(strings.TrimSpace(chunk), ",")
		if chunk == "" {
			continue
		}
		k, v, ok := splitOnceTopLevel(chunk, '=')
		if !ok {
			return nil, p.errAt(line, col, "expected `name=value` section argument")
		}
		if k = strings.TrimSpace(k); !isIdent(k) {
			return nil, p.errAt(line, col, "invalid section argument name")
		}
		x, err := parseExpr(strings.TrimSpace(v), line, col, p.maxDepth)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, binding{k, x})
	}
	if n.body, err = p.block([]string{"endsection"}); err != nil {
		return nil, err
	}
	t, ok := p.peek()
	if !ok || firstWord(t.s) != "endsection" {
		return nil, p.errAt(line, col, "`{{ section }}` missing matching `{{ endsection }}`")
	}
	p.pos++
	if rest := strings.TrimSpace(t.s[len("endsection"):]); rest != "" {
		end, tail, err := sectionName(rest, t.line, t.col)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(tail) != "" {
			return nil, p.errAt(t.line, t.col, "unexpected tokens after endsection name")
		}
		if end != name {
			return nil, p.errAt(t.line, t.col, fmt.Sprintf("mismatched section end: expected `%s`, got `%s`", name, end))
		}
	}
	return n, nil
}

// sectionName reads the quoted name at the start of spec and returns what
// follows it.
func sectionName(spec string, line, col int) (string, string, *Error) {
	s := strings.TrimLeftFunc(spec, unicode.IsSpace)
	if s == "" {
		return "", "", &Error{Line: line, Col: col, msg: "expected section name", kind: errSyntax}
	}
	quote := s[0]
	if quote != '"' && quote != '\'' {
		return "", "", &Error{Line: line, Col: col, msg: "section name must be a string literal", kind: errSyntax}
	}
	var out []byte
	for i := 1; i < len(s); {
		b := s[i]
		if b == quote {
			return latin1(out), s[i+1:], nil
		}
		if b == '\\' && i+1 < len(s) {
			out = append(out, quoteEscape(s[i+1]))
			i += 2
			continue
		}
		out = append(out, b)
		i++
	}
	return "", "", &Error{Line: line, Col: col, msg: "unterminated section name string literal", kind: errSyntax}
}

// firstWord is the text before the first white space.
func firstWord(s string) string {
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i]
	}
	return s
}

// isIdent is Harn's identifier test: a letter or '_' (Unicode's
// Alphabetic), then letters, digits or '_'.
func isIdent(s string) bool {
	for i, r := range s {
		if r == '_' || alphabetic(r) || i > 0 && unicode.IsNumber(r) {
			continue
		}
		return false
	}
	return s != ""
}

func alphabetic(r rune) bool {
	return unicode.IsLetter(r) || unicode.In(r, unicode.Nl, unicode.Other_Alphabetic)
}

// trimLeadingLine drops spaces and tabs, then one line break (after "-}}").
func trimLeadingLine(s string) string {
	i := skipBlanks(s, 0)
	switch {
	case strings.HasPrefix(s[i:], "\n"):
		return s[i+1:]
	case strings.HasPrefix(s[i:], "\r\n"):
		return s[i+2:]
	case strings.HasPrefix(s[i:], "\r"):
		return s[i+1:]
	}
	return s[i:]
}

// trimTrailingLine drops trailing spaces and tabs, then one line break
// (before "{{-").
func trimTrailingLine(s string) string {
	s = strings.TrimRight(s, " \t")
	if strings.HasSuffix(s, "\n") {
		s = strings.TrimSuffix(s[:len(s)-1], "\r")
	}
	return s
}

// scanner walks s the way Harn's splitting helpers do: byte by byte,
// skipping quoted strings (with backslash escapes) and tracking the depth
// of (), [] and {}. visit sees each byte outside a string and the depth
// before it; it returns how far to move (0 stops the walk).
func scan(s string, visit func(i int, depth int) int) { scanFrom(s, 0, true, visit) }

// scanFrom is scan from offset i; with brackets false, brackets are bytes
// like any other (the depth stays 0).
func scanFrom(s string, i int, brackets bool, visit func(i int, depth int) int) {
	depth := 0
	inStr := false
	var quote byte
	for i < len(s) {
		b := s[i]
		if inStr {
			if b == '\\' {
				i += 2
				continue
			}
			if b == quote {
				inStr = false
			}
			i++
			continue
		}
		switch b {
		case '"', '\'':
			inStr, quote = true, b
			i++
			continue
		case '(', '[', '{':
			if brackets {
				depth++
				i++
				continue
			}
		case ')', ']', '}':
			if brackets {
				depth--
				i++
				continue
			}
		}
		step := visit(i, depth)
		if step == 0 {
			return
		}
		i += step
	}
}

func splitTopLevel(s string, delim byte) []string {
	var out []string
	start := 0
	scan(s, func(i, depth int) int {
		if s[i] == delim && depth == 0 {
			out = append(out, s[start:i])
			start = i + 1
		}
		return 1
	})
	return append(out, s[start:])
}

func splitOnceTopLevel(s string, delim byte) (string, string, bool) {
	at := -1
	scan(s, func(i, depth int) int {
		if s[i] == delim && depth == 0 {
			at = i
			return 0
		}
		return 1
	})
	if at < 0 {
		return "", "", false
	}
	return s[:at], s[at+1:], true
}

// splitKeyword splits s at the first kw outside strings and brackets.
func splitKeyword(s, kw string) (string, string, bool) {
	at := -1
	scan(s, func(i, depth int) int {
		if i+len(kw) > len(s) {
			return 0
		}
		if depth == 0 && s[i:i+len(kw)] == kw {
			at = i
			return 0
		}
		return 1
	})
	if at < 0 {
		return "", "", false
	}
	return s[:at], s[at+len(kw):], true
}

// splitSectionArgs splits a section's arguments at top-level commas, and at
// white space that comes before another name=value.
func splitSectionArgs(s string) []string {
	var out []string
	start := 0
	scan(s, func(i, depth int) int {
		switch {
		case s[i] == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		case asciiSpace(s[i]) && depth == 0:
			j := i
			for j < len(s) && asciiSpace(s[j]) {
				j++
			}
			if nextIsArg(s[j:]) {
				out = append(out, s[start:i])
				start = j
			}
			return j - i
		}
		return 1
	})
	return append(out, s[start:])
}

// asciiSpace is white space as Harn's byte-wise splitters see it (a byte
// past ASCII never splits there without Harn failing on the slice).
func asciiSpace(b byte) bool {
	return b == ' ' || b >= '\t' && b <= '\r'
}

func nextIsArg(s string) bool {
	t := strings.TrimLeftFunc(s, unicode.IsSpace)
	eq := strings.IndexByte(t, '=')
	if eq < 0 {
		return false
	}
	return isIdent(strings.TrimSpace(t[:eq]))
}
