package explain

// An independent implementation of the reducer rules of docs/rules.md, written the
// slow, obvious way from the text: options decoded with encoding/json into
// maps, the redaction catalog as one Go regexp per pattern, run once in order, and a
// second BLAKE3 implementation. TestAgreesWithReference runs both on random
// Harn-shaped options and compares every row.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"lukechampine.com/blake3"
)

// refCatalog is Harn's catalog (crates/harn-vm/src/secret_patterns.rs)
// written for Go's regexp. Rust reads \b and \s as Unicode, Go as ASCII,
// so \s is spelt out as Unicode's White_Space set, and the \b at either end
// of a pattern is left out of the regexp and checked by refRedact with a
// Unicode word test.
var refCatalog = func() []refPattern {
	const sp = `[\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]`
	mk := func(name, flags, body string, lead, trail bool) refPattern {
		body = strings.ReplaceAll(body, `\s`, sp)
		p := refPattern{name: name, lead: lead, trail: trail, re: regexp.MustCompile(flags + `^(?:` + body + `)`)}
		if trail {
			p.whole = regexp.MustCompile(flags + `^(?:` + body + `)$`)
		}
		return p
	}
	return []refPattern{
		mk("jwt", "", `eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}`, true, true),
		mk("github_token", "", `gh[pousr]_[A-Za-z0-9]{36,255}`, true, true),
		mk("github_pat_fine", "", `github_pat_[A-Za-z0-9_]{20,255}`, true, true),
		mk("slack_token", "", `xox[abprs]-[A-Za-z0-9-]{10,255}`, true, true),
		mk("aws_access_key", "", `(?:AKIA|ASIA|AGPA|AIDA|ANPA|AROA|AIPA)[A-Z0-9]{16}`, true, true),
		mk("gitlab_token", "", `glpat-[A-Za-z0-9_-]{20,255}`, true, true),
		mk("huggingface_token", "", `hf_[A-Za-z0-9]{20,255}`, true, true),
		mk("cerebras_key", "", `csk-[A-Za-z0-9]{20,255}`, true, true),
		mk("together_key", "", `tgp_v1_[A-Za-z0-9_-]{20,255}`, true, true),
		mk("google_api_key", "", `AIza[A-Za-z0-9_-]{35}`, true, true),
		mk("npm_token", "", `npm_[A-Za-z0-9]{36}`, true, true),
		mk("openai_key", "", `sk-[A-Za-z0-9_-]{20,255}`, true, true),
		mk("stripe_key", "", `(?:rk|sk)_(?:live|test)_[0-9A-Za-z]{16,255}`, true, true),
		mk("private_key_block", "(?s)", `-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----`, false, false),
		mk("bearer_token", "(?i)", `Bearer\s+[A-Za-z0-9._\-+/=]{12,}`, true, false),
		mk("sensitive_assignment", "(?i)", `(?:api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|password|passwd|secret|token)\s*[:=]\s*(?:"[A-Za-z0-9._\-+/=]{6,}"|'[A-Za-z0-9._\-+/=]{6,}'|[A-Za-z0-9._\-+/=]*[0-9._\-+/=][A-Za-z0-9._\-+/=]*|secret|hidden|hideme|password|passwd|token)`, true, false),
	}
}()

type refPattern struct {
	name        string
	re, whole   *regexp.Regexp
	lead, trail bool
}

func refWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) ||
		unicode.In(r, unicode.Nl, unicode.Other_Alphabetic, unicode.Pc, unicode.Join_Control)
}

func refBoundary(s string, i int) bool {
	before, after := false, false
	if r, n := utf8.DecodeLastRuneInString(s[:i]); n > 0 {
		before = r != utf8.RuneError && refWord(r)
	}
	if r, n := utf8.DecodeRuneInString(s[i:]); n > 0 {
		after = r != utf8.RuneError && refWord(r)
	}
	return before != after
}

// refRedact runs each pattern once, in order, over the output of the one
// before (Harn's scan_secret_patterns; the generator's texts are far below
// its 256 KiB window and hold no bare URL). A pattern's matches are found
// left to right; where it ends in \b, the longest end with a boundary wins
// (what a greedy final repetition after a fixed prefix gives).
func refRedact(s string) string {
	for _, p := range refCatalog {
		var b strings.Builder
		last := 0
		for i := 0; i < len(s); i++ {
			if i < last || p.lead && !refBoundary(s, i) {
				continue
			}
			m := p.re.FindStringIndex(s[i:])
			if m == nil {
				continue
			}
			end := i + m[1]
			if p.trail {
				for end > i && !(refBoundary(s, end) && p.whole.MatchString(s[i:end])) {
					end--
				}
				if end == i {
					continue
				}
			}
			fmt.Fprintf(&b, "%s<redacted:%s:%d>", s[last:i], p.name, end-i)
			last = end
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s
}

// refDigest redacts and hashes with lukechampine.com/blake3, not the
// implementation package digest uses.
func refDigest(s string) string {
	return fmt.Sprintf("blake3:%x", blake3.Sum256([]byte(refRedact(s))))
}

type refRow struct {
	ID, Source, Bucket, Reason, Digest string
	Included                           bool
	Bytes                              int
}

type refResult struct {
	System          *string
	Root, CallRole  string
	Rows            []refRow
	Whole           string
	Bytes, Inc, Exc int
}

type refFrag struct {
	id, source, bucket, body string
	tools, caps              []string
}

// refShow is Harn's VmValue::display of a value decoded with UseNumber,
// written from Harn's description: strings as they are, null as nil,
// integers that fit an i64 in decimal, other numbers as floats ("{:.1}" for
// whole numbers below 1e15, else the shortest form), lists and dicts
// (sorted keys) in brackets with ", " between items.
func refShow(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return x
	case bool:
		return fmt.Sprint(x)
	case json.Number:
		lit := string(x)
		if !strings.ContainsAny(lit, ".eE") && lit != "-0" {
			if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
				return fmt.Sprint(n)
			}
		}
		f, _ := strconv.ParseFloat(lit, 64)
		if f == float64(int64(f)) && f < 1e15 && f > -1e15 {
			return fmt.Sprintf("%.1f", f)
		}
		return strconv.FormatFloat(f, 'f', -1, 64)
	case []any:
		items := make([]string, len(x))
		for i, it := range x {
			items[i] = refShow(it)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		items := make([]string, len(keys))
		for i, k := range keys {
			items[i] = k + ": " + refShow(x[k])
		}
		return "{" + strings.Join(items, ", ") + "}"
	}
	panic(fmt.Sprintf("refShow(%T)", v))
}

// shows returns a list's items shown as text; a non-list is no list.
func shows(v any) []string {
	var out []string
	for _, x := range asList(v) {
		out = append(out, refShow(x))
	}
	return out
}

// refCaps collects capabilities the way Harn's collect_caps does.
func refCaps(v any, present bool, into map[string]bool) {
	if !present {
		return
	}
	switch x := v.(type) {
	case []any:
		for _, c := range shows(x) {
			if c != "" {
				into[c] = true
			}
		}
	case map[string]any:
		for k, f := range x {
			if f != nil && f != false {
				into[k] = true
			}
		}
	default:
		if c := refShow(x); c != "" {
			into[c] = true
		}
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// shown returns m[key] shown as text, and whether the key is there.
func shown(m map[string]any, key string) (string, bool) {
	v, ok := m[key]
	if !ok {
		return "", false
	}
	return refShow(v), true
}

func reference(optionsJSON []byte) refResult {
	var o map[string]any
	dec := json.NewDecoder(strings.NewReader(string(optionsJSON)))
	dec.UseNumber()
	if err := dec.Decode(&o); err != nil {
		panic(err)
	}
	res := refResult{Root: "composed", CallRole: "unattributed"}
	for _, k := range []string{"mock_scope", "call_role"} {
		if r, ok := o[k].(string); ok && strings.TrimSpace(r) != "" {
			res.CallRole = strings.TrimSpace(r)
		}
	}

	if sys, ok := o["system"].(map[string]any); ok { // the replacement root
		c := sys["content"].(string)
		d := refDigest(c)
		res.System, res.Root = &c, "replacement"
		res.Rows = []refRow{{"replacement", "caller", "before", "exclusive replacement root", d, true, len(c)}}
		res.Whole, res.Bytes, res.Inc = d, len(c), 1
		return res
	}

	var frags []refFrag
	for i, it := range asList(o["system"]) {
		id := fmt.Sprintf("system[%d]", i)
		if s, ok := it.(string); ok {
			frags = append(frags, refFrag{id: id, source: id, bucket: "before", body: s})
			continue
		}
		m := it.(map[string]any)
		if en, ok := m["enabled"]; ok && (en == nil || en == false) {
			continue
		}
		body, _ := shown(m, "content")
		if t, _ := shown(m, "title"); strings.TrimSpace(t) != "" {
			body = "## " + strings.TrimSpace(t) + "\n" + strings.TrimSpace(body)
		}
		bucket := "before"
		if p, _ := m["position"].(string); p == "after" {
			bucket = "after"
		}
		frags = append(frags, refFrag{id: id, source: id, bucket: bucket, body: body})
	}
	idOr := func(m map[string]any, key, def string) string {
		if s, ok := shown(m, key); ok && s != "" {
			return s
		}
		return def
	}
	if parts, ok := o["_system_fragments"].([]any); ok { // present as a list, even empty
		for i, it := range parts {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			body, ok := shown(m, "body")
			if !ok {
				continue
			}
			bucket := "before"
			if b, _ := shown(m, "bucket"); strings.ToLower(strings.TrimSpace(b)) == "after" {
				bucket = "after"
			}
			frags = append(frags, refFrag{id: idOr(m, "id", fmt.Sprintf("primary[%d]", i)), source: idOr(m, "source", "primary"),
				bucket: bucket, body: body, tools: shows(m["requires_tools"]), caps: shows(m["requires_caps"])})
		}
	} else {
		if s, ok := o["system"].(string); ok && strings.TrimSpace(s) != "" {
			frags = append(frags, refFrag{id: "primary", source: "primary", bucket: "before", body: s})
		}
		prof, _ := o["context_profile"].(map[string]any)
		for i, it := range asList(prof["prompt_fragments"]) {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			body, ok := shown(m, "body")
			if !ok {
				body, _ = shown(m, "content")
			}
			if strings.TrimSpace(body) == "" {
				continue
			}
			frags = append(frags, refFrag{id: idOr(m, "id", fmt.Sprintf("profile[%d]", i)), source: idOr(m, "source", "profile"),
				bucket: "before", body: body, tools: shows(m["requires_tools"]), caps: shows(m["requires_caps"])})
		}
	}
	tools, _ := o["tools"].([]any)
	if m, ok := o["tools"].(map[string]any); ok {
		tools, _ = m["tools"].([]any)
	}
	active := map[string]bool{}
	for _, it := range tools {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		name, _ := shown(m, "name")
		if name == "" {
			continue
		}
		active[name] = true
		if g, _ := shown(m, "guidance"); strings.TrimSpace(g) != "" {
			frags = append(frags, refFrag{id: "tool:" + name + ".guidance", source: "tool:" + name,
				bucket: "before", body: g, tools: []string{name}})
		}
	}
	caps := map[string]bool{}
	c, ok := o["capabilities"]
	refCaps(c, ok, caps)
	if prof, ok := o["context_profile"].(map[string]any); ok {
		c, ok := prof["caps"]
		refCaps(c, ok, caps)
	}

	var parts []string
	for _, bucket := range []string{"before", "after"} {
		for _, f := range frags {
			if f.bucket != bucket {
				continue
			}
			body := strings.TrimSpace(f.body)
			row := refRow{ID: f.id, Source: f.source, Bucket: bucket, Digest: refDigest(body)}
			row.Reason = gateReason(f, body, active, caps)
			row.Included = !strings.HasPrefix(row.Reason, "requires") && row.Reason != "empty body"
			if row.Included {
				row.Bytes = len(body)
				parts = append(parts, body)
				res.Inc++
			} else {
				res.Exc++
			}
			res.Rows = append(res.Rows, row)
		}
	}
	whole := strings.Join(parts, "\n\n")
	if len(parts) > 0 {
		res.System = &whole
	}
	res.Whole, res.Bytes = refDigest(whole), len(whole)
	return res
}

func gateReason(f refFrag, body string, tools, caps map[string]bool) string {
	if body == "" {
		return "empty body"
	}
	for _, t := range f.tools {
		if !tools[t] {
			return "requires tool `" + t + "` (not available)"
		}
	}
	for _, c := range f.caps {
		if !caps[c] {
			return "requires capability `" + c + "` (not set)"
		}
	}
	if len(f.tools) > 0 {
		return "tool(s) present: " + strings.Join(f.tools, ", ")
	}
	if len(f.caps) > 0 {
		return "capabilit(ies) present: " + strings.Join(f.caps, ", ")
	}
	return "unconditional"
}

func fromExplanation(e *Explanation) refResult {
	res := refResult{System: e.system(), Root: e.Manifest.Root, CallRole: e.Manifest.CallRole,
		Whole: e.Manifest.WholePromptDigest.String(), Bytes: e.Manifest.SystemPromptBytes}
	res.Inc, res.Exc = e.counts()
	for _, r := range e.Fragments {
		res.Rows = append(res.Rows, refRow{r.ID, r.Source, r.Bucket, r.Reason, r.Digest.String(), r.Included, r.Bytes})
	}
	return res
}

// Random Harn-shaped options, in the spirit of the conformance vectors.
