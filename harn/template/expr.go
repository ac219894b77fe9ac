package template

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// An expression, as Harn's template expression parser builds it. And/or
// chains and filter pipelines are kept flat (Harn nests them to the left;
// the value and the order of evaluation are the same) so that evaluating a
// long chain needs no deep recursion.
type expr interface{}

type (
	litExpr  struct{ v any }
	pathExpr struct{ segs []seg }
	notExpr  struct{ x expr }
	cmpExpr  struct {
		op   string // == != < <= > >=
		a, b expr
	}
	// logicExpr is a chain of "and" (or "or"): the first falsy (truthy)
	// operand, else the last.
	logicExpr struct {
		or bool
		xs []expr
	}
	pipeExpr struct {
		x       expr
		filters []filterCall
		names   []string // the filters' names, for spans
	}
)

// filterCall is a filter as written: its name, its row of the filter
// table (nil for a name Harn has no filter of: an error when it runs, as
// in Harn, not when it parses) and its arguments.
type filterCall struct {
	name string
	f    *filter
	args []expr
}

// seg is one step of a path: a field (.name or the head), an integer index
// or a string key.
type seg struct {
	index bool
	key   bool
	s     string
	i     int64
}

type etokKind uint8

const (
	eIdent etokKind = iota
	eStr
	eInt
	eFloat
	eLParen
	eRParen
	eLBracket
	eRBracket
	eDot
	eComma
	eColon
	ePipe
	eBang
	eEqEq
	eBangEq
	eLt
	eLe
	eGt
	eGe
	eAnd
	eOr
	eNot
	eTrue
	eFalse
	eNil
)

type etok struct {
	kind etokKind
	s    string
	i    int64
	f    float64
}

// debug is the token as Rust's Debug prints Harn's token enum, which Harn
// puts in "unexpected token" messages.
func (t etok) debug() string {
	switch t.kind {
	case eIdent:
		return "Ident(" + rustDebugString(t.s) + ")"
	case eStr:
		return "Str(" + rustDebugString(t.s) + ")"
	case eInt:
		return "Int(" + strconv.FormatInt(t.i, 10) + ")"
	case eFloat:
		return "Float(" + rustDebugFloat(t.f) + ")"
	}
	return [...]string{eLParen: "LParen", eRParen: "RParen", eLBracket: "LBracket", eRBracket: "RBracket",
		eDot: "Dot", eComma: "Comma", eColon: "Colon", ePipe: "Pipe", eBang: "Bang", eEqEq: "EqEq",
		eBangEq: "BangEq", eLt: "Lt", eLe: "Le", eGt: "Gt", eGe: "Ge", eAnd: "AndKw", eOr: "OrKw",
		eNot: "NotKw", eTrue: "True", eFalse: "False", eNil: "Nil"}[t.kind]
}

// rustDebugString quotes s as Rust's Debug for str does.
func rustDebugString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case 0:
			b.WriteString(`\0`)
		default:
			if !unicode.IsPrint(r) || unicode.In(r, unicode.Mn, unicode.Me) {
				fmt.Fprintf(&b, `\u{%x}`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// rustDebugFloat formats f as Rust's Debug for f64: the shortest digits,
// with ".0" on a whole number, in exponent form below 1e-4 or from 1e16.
func rustDebugFloat(f float64) string {
	a := math.Abs(f)
	if f != 0 && (a < 1e-4 || a >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		neg := strings.HasPrefix(exp, "-")
		exp = strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
		if neg {
			exp = "-" + exp
		}
		return mant + "e" + exp
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// latin1 is what Harn's lexers make of the bytes of a quoted string: each
// byte becomes the character of that number, so text beyond ASCII comes
// out as its UTF-8 bytes read as Latin-1.
func latin1(b []byte) string {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b)
	}
	out := make([]rune, len(b))
	for i, c := range b {
		out[i] = rune(c)
	}
	return string(out)
}

func quoteEscape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	}
	return c
}

// exprError is an expression error at its directive's position.
func exprError(line, col int, msg string) *Error {
	return &Error{Line: line, Col: col, msg: msg, kind: errSyntax}
}

func tokenizeExpr(src string, line, col int) ([]etok, *Error) {
	var toks []etok
	two := func(i int, next byte) bool { return i+1 < len(src) && src[i+1] == next }
	var i int
	// pair reads a two-byte token (the byte, then next) or else the one-byte one.
	pair := func(next byte, double, single etokKind) {
		if two(i, next) {
			toks = append(toks, etok{kind: double})
			i += 2
			return
		}
		toks = append(toks, etok{kind: single})
		i++
	}
	for i < len(src) {
		b := src[i]
		switch {
		case b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f':
			i++
		case b == '(' || b == ')' || b == '[' || b == ']' || b == '.' || b == ',' || b == ':':
			toks = append(toks, etok{kind: map[byte]etokKind{'(': eLParen, ')': eRParen, '[': eLBracket,
				']': eRBracket, '.': eDot, ',': eComma, ':': eColon}[b]})
			i++
		case b == '|':
			pair('|', eOr, ePipe)
		case b == '!':
			pair('=', eBangEq, eBang)
		case b == '<':
			pair('=', eLe, eLt)
		case b == '>':
			pair('=', eGe, eGt)
		case b == '&' || b == '=':
			if !two(i, b) {
				return nil, exprError(line, col, map[byte]string{'&': "unexpected `&`", '=': "unexpected `=` (use `==`)"}[b])
			}
			toks = append(toks, etok{kind: map[byte]etokKind{'&': eAnd, '=': eEqEq}[b]})
			i += 2
		case b == '"' || b == '\'':
			var out []byte
			j := i + 1
			for j < len(src) && src[j] != b {
				if src[j] == '\\' && j+1 < len(src) {
					out = append(out, quoteEscape(src[j+1]))
					j += 2
					continue
				}
				out = append(out, src[j])
				j++
			}
			if j >= len(src) {
				return nil, exprError(line, col, "unterminated string literal")
			}
			toks = append(toks, etok{kind: eStr, s: latin1(out)})
			i = j + 1
		case isDigit(b) || b == '-' && i+1 < len(src) && isDigit(src[i+1]):
			start := i
			if b == '-' {
				i++
			}
			isFloat := false
			for i < len(src) && (isDigit(src[i]) || src[i] == '.') {
				if src[i] == '.' {
					if i+1 < len(src) && isDigit(src[i+1]) {
						isFloat = true
						i++
						continue
					}
					break
				}
				i++
			}
			lex := src[start:i]
			if isFloat {
				// An overflowing literal is an infinity, as Rust parses it.
				f, err := strconv.ParseFloat(lex, 64)
				if err != nil && !errors.Is(err, strconv.ErrRange) {
					return nil, exprError(line, col, fmt.Sprintf("invalid number `%s`", lex))
				}
				toks = append(toks, etok{kind: eFloat, f: f})
			} else {
				v, err := strconv.ParseInt(lex, 10, 64)
				if err != nil {
					return nil, exprError(line, col, fmt.Sprintf("invalid integer `%s`", lex))
				}
				toks = append(toks, etok{kind: eInt, i: v})
			}
		case isASCIILetter(b) || b == '_':
			start := i
			for i < len(src) && (isDigit(src[i]) || isASCIILetter(src[i]) || src[i] == '_') {
				i++
			}
			switch w := src[start:i]; w {
			case "true":
				toks = append(toks, etok{kind: eTrue})
			case "false":
				toks = append(toks, etok{kind: eFalse})
			case "nil":
				toks = append(toks, etok{kind: eNil})
			case "and":
				toks = append(toks, etok{kind: eAnd})
			case "or":
				toks = append(toks, etok{kind: eOr})
			case "not":
				toks = append(toks, etok{kind: eNot})
			default:
				toks = append(toks, etok{kind: eIdent, s: w})
			}
		default:
			return nil, exprError(line, col, fmt.Sprintf("unexpected character `%c` in expression", rune(b)))
		}
	}
	return toks, nil
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isASCIILetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

type exprParser struct {
	toks      []etok
	pos       int
	line, col int
	maxDepth  int
}

// parseExpr parses an expression: a filter pipeline over or/and/not,
// comparisons and primaries, nested at most maxDepth deep.
func parseExpr(src string, line, col, maxDepth int) (expr, *Error) {
	toks, err := tokenizeExpr(src, line, col)
	if err != nil {
		return nil, err
	}
	p := &exprParser{toks: toks, line: line, col: col, maxDepth: maxDepth}
	e, err := p.filter(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(toks) {
		return nil, p.err(fmt.Sprintf("unexpected token `%s` in expression", toks[p.pos].debug()))
	}
	return e, nil
}

func (p *exprParser) err(msg string) *Error { return exprError(p.line, p.col, msg) }

func (p *exprParser) peek() (etok, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return etok{}, false
}

func (p *exprParser) eat(k etokKind) bool {
	if t, ok := p.peek(); ok && t.kind == k {
		p.pos++
		return true
	}
	return false
}

func (p *exprParser) depth(d int) *Error {
	if d > p.maxDepth {
		return p.err(fmt.Sprintf("template expression depth exceeded (%d levels)", p.maxDepth))
	}
	return nil
}

func (p *exprParser) filter(d int) (expr, *Error) {
	if err := p.depth(d); err != nil {
		return nil, err
	}
	left, err := p.or(d)
	if err != nil {
		return nil, err
	}
	var calls []filterCall
	for p.eat(ePipe) {
		t, ok := p.peek()
		if !ok || t.kind != eIdent {
			return nil, p.err("expected filter name after `|`")
		}
		p.pos++
		call := filterCall{name: t.s, f: filters[t.s]}
		if p.eat(eColon) {
			for {
				a, err := p.or(d + 1)
				if err != nil {
					return nil, err
				}
				call.args = append(call.args, a)
				if !p.eat(eComma) {
					break
				}
			}
		}
		calls = append(calls, call)
	}
	if calls == nil {
		return left, nil
	}
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.name
	}
	return &pipeExpr{x: left, filters: calls, names: names}, nil
}

func (p *exprParser) or(d int) (expr, *Error) {
	return p.chain(d, true)
}

// chain parses operands of "or" (or, with or false, of "and") joined left
// to right.
func (p *exprParser) chain(d int, or bool) (expr, *Error) {
	if err := p.depth(d); err != nil {
		return nil, err
	}
	next := p.not
	op := eAnd
	if or {
		next = func(d int) (expr, *Error) { return p.chain(d, false) }
		op = eOr
	}
	first, err := next(d)
	if err != nil {
		return nil, err
	}
	xs := []expr{first}
	for p.eat(op) {
		x, err := next(d)
		if err != nil {
			return nil, err
		}
		xs = append(xs, x)
	}
	if len(xs) == 1 {
		return first, nil
	}
	return &logicExpr{or: or, xs: xs}, nil
}

func (p *exprParser) not(d int) (expr, *Error) {
	if err := p.depth(d); err != nil {
		return nil, err
	}
	if p.eat(eBang) || p.eat(eNot) {
		x, err := p.not(d + 1)
		if err != nil {
			return nil, err
		}
		return &notExpr{x}, nil
	}
	return p.cmp(d)
}

func (p *exprParser) cmp(d int) (expr, *Error) {
	if err := p.depth(d); err != nil {
		return nil, err
	}
	left, err := p.unary(d)
	if err != nil {
		return nil, err
	}
	t, ok := p.peek()
	if !ok {
		return left, nil
	}
	ops := map[etokKind]string{eEqEq: "==", eBangEq: "!=", eLt: "<", eLe: "<=", eGt: ">", eGe: ">="}
	op, isOp := ops[t.kind]
	if !isOp {
		return left, nil
	}
	p.pos++
	right, err := p.unary(d)
	if err != nil {
		return nil, err
	}
	return &cmpExpr{op: op, a: left, b: right}, nil
}

func (p *exprParser) unary(d int) (expr, *Error) {
	if err := p.depth(d); err != nil {
		return nil, err
	}
	return p.primary(d)
}

func (p *exprParser) primary(d int) (expr, *Error) {
	if err := p.depth(d); err != nil {
		return nil, err
	}
	t, ok := p.peek()
	if !ok {
		return nil, p.err("expected expression")
	}
	p.pos++
	switch t.kind {
	case eNil:
		return &litExpr{nil}, nil
	case eTrue:
		return &litExpr{true}, nil
	case eFalse:
		return &litExpr{false}, nil
	case eInt:
		return &litExpr{t.i}, nil
	case eFloat:
		return &litExpr{t.f}, nil
	case eStr:
		return &litExpr{t.s}, nil
	case eLParen:
		e, err := p.or(d + 1)
		if err != nil {
			return nil, err
		}
		if !p.eat(eRParen) {
			return nil, p.err("expected `)`")
		}
		return e, nil
	case eIdent:
		return p.path(t.s)
	case eBang, eNot:
		x, err := p.primary(d + 1)
		if err != nil {
			return nil, err
		}
		return &notExpr{x}, nil
	}
	return nil, p.err(fmt.Sprintf("unexpected token `%s`", t.debug()))
}

func (p *exprParser) path(head string) (expr, *Error) {
	segs := []seg{{s: head}}
	for {
		t, ok := p.peek()
		if !ok {
			break
		}
		if t.kind == eDot {
			p.pos++
			n, ok := p.peek()
			if !ok || n.kind != eIdent {
				return nil, p.err("expected identifier after `.`")
			}
			p.pos++
			segs = append(segs, seg{s: n.s})
			continue
		}
		if t.kind != eLBracket {
			break
		}
		p.pos++
		n, ok := p.peek()
		switch {
		case ok && n.kind == eInt:
			segs = append(segs, seg{index: true, i: n.i})
		case ok && n.kind == eStr:
			segs = append(segs, seg{key: true, s: n.s})
		default:
			return nil, p.err("expected integer or string inside `[...]`")
		}
		p.pos++
		if !p.eat(eRBracket) {
			return nil, p.err("expected `]`")
		}
	}
	return &pathExpr{segs}, nil
}
