package explain

// An independent implementation of the reducer rules of docs/rules.md, written the
// slow, obvious way from the text: options decoded with encoding/json into
// maps, the redaction catalog as plain regexps run over whole strings, and a
// second BLAKE3 implementation. TestAgreesWithReference runs both on random
// Harn-shaped options and compares every row.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	zeebo "github.com/zeebo/blake3"
)

var refCatalog = []struct {
	name string
	re   *regexp.Regexp
}{
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\b`)},
	{"github_token", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,255}\b`)},
	{"github_pat_fine", regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,255}\b`)},
	{"slack_token", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,255}\b`)},
	{"aws_access_key", regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|ANPA|AROA|AIPA)[A-Z0-9]{16}\b`)},
	{"gitlab_token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,255}\b`)},
	{"huggingface_token", regexp.MustCompile(`\bhf_[A-Za-z0-9]{20,255}\b`)},
	{"cerebras_key", regexp.MustCompile(`\bcsk-[A-Za-z0-9]{20,255}\b`)},
	{"together_key", regexp.MustCompile(`\btgp_v1_[A-Za-z0-9_-]{20,255}\b`)},
	{"google_api_key", regexp.MustCompile(`\bAIza[A-Za-z0-9_-]{35}\b`)},
	{"npm_token", regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{"openai_key", regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,255}\b`)},
	{"stripe_key", regexp.MustCompile(`\b(?:rk|sk)_(?:live|test)_[0-9A-Za-z]{16,255}\b`)},
	{"private_key_block", regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----`)},
	{"bearer_token", regexp.MustCompile(`(?i)\bBearer\s+[A-Za-z0-9._\-+/=]{12,}`)},
	{"sensitive_assignment", regexp.MustCompile(`(?i)\b(?:api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|password|passwd|secret|token)\s*[:=]\s*(?:"[A-Za-z0-9._\-+/=]{6,}"|'[A-Za-z0-9._\-+/=]{6,}'|[A-Za-z0-9._\-+/=]*[0-9._\-+/=][A-Za-z0-9._\-+/=]*|secret|hidden|hideme|password|passwd|token)`)},
}

// refDigest redacts (catalog passes until nothing changes; the generator
// makes no URLs) and hashes with zeebo/blake3.
func refDigest(s string) string {
	for {
		prev := s
		for _, p := range refCatalog {
			s = p.re.ReplaceAllStringFunc(s, func(m string) string {
				return fmt.Sprintf("<redacted:%s:%d>", p.name, len(m))
			})
		}
		if s == prev {
			break
		}
	}
	return fmt.Sprintf("blake3:%x", zeebo.Sum256([]byte(s)))
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
	res := refResult{System: e.System, Root: e.Root, CallRole: e.CallRole,
		Whole: e.WholePromptDigest, Bytes: e.SystemPromptBytes, Inc: e.Included, Exc: e.Excluded}
	for _, r := range e.Fragments {
		res.Rows = append(res.Rows, refRow{r.ID, r.Source, r.Bucket, r.Reason, r.Digest, r.Included, r.Bytes})
	}
	return res
}

// Random Harn-shaped options, in the spirit of the conformance vectors.
