package request

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/internal/wire"
)

// Divergence is where a request leaves an earlier one's prefix: what a
// prefix cache can no longer reuse of the earlier request.
type Divergence struct {
	// Index is the first segment of B that is not A's at the same place,
	// counted from 0 (the text outputs count from 1):
	// len(A.Segments) when B is A or A followed by more (nothing diverges,
	// and Reason is empty).
	Index int `json:"index"`
	// Path and Section are that segment's (B's; A's when B ended first;
	// empty when B is A).
	Path    string `json:"path,omitempty"`
	Section string `json:"section,omitempty"`
	// Offset is the first byte, inside the segment's redacted text (a text
	// block's text as the transcript keeps it; anything else's canonical,
	// redacted JSON, the digest's input, so a body's white space moves no
	// offset), at which the two differ; -1 when a side has no segment
	// there.
	Offset int `json:"offset"`
	// Setting is the request member that changed the prefix ahead of every
	// segment (model, tool_choice, thinking, …), when one did.
	Setting string `json:"setting,omitempty"`
	// Reason says what changed at Path, in words: "tool Bash:
	// description changed", "fragment env: binding date changed", "tools
	// reordered", `changed at byte 27: "10:00Z." became "10:02Z."`
	// (words redacted).
	Reason string `json:"reason"`
	// SharedTokens are B's tokens ahead of Index, and RestTokens its tokens
	// from Index on: what a cache keyed on A's prefix can read, and what B
	// must send (and write) again.
	SharedTokens int `json:"shared_tokens"`
	RestTokens   int `json:"rest_tokens"`
}

// Diverge compares b with a, segment by segment in cache order, and says
// where b leaves a's prefix. settings names the request members that are
// part of the rendered prefix (package cache knows them per provider);
// one that differs diverges at the first segment of the section it
// belongs to, given as settings' value ("tools", "system", "messages").
func Diverge(a, b *Manifest, settings map[string]string) Divergence {
	d := Divergence{Index: len(b.Segments), Offset: -1}
	limit := len(b.Segments)
	switch {
	case a.Provider != b.Provider:
		// Two providers share no cache, whatever the bytes.
		d.Index, d.Setting, d.Reason = 0, "provider", fmt.Sprintf("the provider changed (%s, then %s): no prompt cache is shared", a.Provider, b.Provider)
		limit = 0
	case a.Model != b.Model:
		d.Index, d.Setting, d.Reason = 0, "model", fmt.Sprintf("the model changed (%s, then %s)", a.Model, b.Model)
		limit = 0
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if a.Cache.Settings[k] == b.Cache.Settings[k] {
			continue
		}
		at := firstOf(b, settings[k])
		if at < limit {
			limit = at
			d.Index, d.Setting, d.Reason = at, k, fmt.Sprintf("%s changed", k)
		}
	}
	for i := 0; i < limit; i++ {
		if i >= len(a.Segments) {
			// B goes on where A ended: a setting changed past A's end
			// leaves A's whole prefix to read.
			d.Index, d.Setting, d.Reason = i, "", ""
			break
		}
		if a.Segments[i].Digest != b.Segments[i].Digest || a.Segments[i].Path != b.Segments[i].Path {
			d.Index, d.Setting = i, ""
			d.Reason, d.Offset = change(a, b, i)
			break
		}
	}
	if d.Index == len(b.Segments) && d.Setting == "" && len(a.Segments) > len(b.Segments) {
		d.Reason = fmt.Sprintf("ends after %d of the earlier request's %d segments", len(b.Segments), len(a.Segments))
	}
	if d.Index < len(b.Segments) {
		d.Path, d.Section = b.Segments[d.Index].Path, b.Segments[d.Index].Section
	} else if d.Index < len(a.Segments) {
		d.Path, d.Section = a.Segments[d.Index].Path, a.Segments[d.Index].Section
	}
	for i, s := range b.Segments {
		if i < d.Index {
			d.SharedTokens += s.Tokens
		} else {
			d.RestTokens += s.Tokens
		}
	}
	return d
}

// sectionOrder is the cache order of the sections.
var sectionOrder = map[string]int{"tools": 0, "system": 1, "messages": 2}

// firstOf is the first segment of section (len(Segments) when none).
func firstOf(m *Manifest, section string) int {
	for i, s := range m.Segments {
		if sectionOrder[s.Section] >= sectionOrder[section] {
			return i
		}
	}
	return len(m.Segments)
}

// change says what differs at segment i, and the first differing byte.
func change(a, b *Manifest, i int) (string, int) {
	sa, sb := &a.Segments[i], &b.Segments[i]
	ta, tb := a.diffText(i), b.diffText(i)
	off := commonPrefix(ta, tb)
	if sa.Section == "tools" && sb.Section == "tools" {
		if moved := reordered(a, b); moved != "" {
			return moved, off
		}
	}
	if sa.Path != sb.Path {
		if sectionOrder[sb.Section] > sectionOrder[sa.Section] {
			// B's section begins where A's earlier one went on.
			return fmt.Sprintf("comes where %s was: %s removed", sa.Path, sa.Section), -1
		}
		return fmt.Sprintf("added (before it: %s)", sa.Path), -1
	}
	switch {
	case sb.Fragment != "" || sa.Fragment != "":
		if sa.Fragment != sb.Fragment {
			return fmt.Sprintf("fragment %s takes the place of fragment %s", sb.Fragment, sa.Fragment), off
		}
		if bs := bindings(sa, sb); bs != "" {
			return fmt.Sprintf("fragment %s: %s", sb.Fragment, bs), off
		}
		return fmt.Sprintf("fragment %s changed", sb.Fragment), off
	case sb.Section == "tools":
		name := sb.Name
		if name == "" {
			name = sb.Path
		}
		if sa.Name != sb.Name {
			return fmt.Sprintf("tool %s takes the place of tool %s", sb.Name, sa.Name), off
		}
		if keys := changedKeys(sa.Raw, sb.Raw); keys != "" {
			return fmt.Sprintf("tool %s: %s changed", name, keys), off
		}
		return fmt.Sprintf("tool %s changed", name), off
	}
	// A block that is not text (a tool call, a tool result, an image) is
	// named by the members that changed; a text block by its words, unless
	// its text is the same.
	switch keys := changedKeys(sa.Raw, sb.Raw); {
	case keys != "" && ta == tb:
		return fmt.Sprintf("%s changed", keys), off
	case keys != "" && !sb.quoted:
		return fmt.Sprintf("%s changed at byte %d%s", keys, off, snippet(ta, tb, off)), off
	}
	return "changed at byte " + strconv.Itoa(off) + snippet(ta, tb, off), off
}

// diffText is what segment i is compared over for the first changed byte:
// a text block's text, redacted as a whole, or the canonical, redacted
// JSON its digest is taken over (so how a body spaces a tool definition
// moves no offset, and the offset means the same in a body and in a
// transcript's copy). Redacted whole, and never a window of it: a window
// cut first can leave out a secret's recognisable start (eyJ, sk-) and so
// keep its other bytes. Worked out only here: a diff is rare, and the
// manifest keeps no copy.
func (m *Manifest) diffText(i int) string {
	s := &m.Segments[i]
	if s.quoted || s.Raw == nil {
		return redact.String(s.counted())
	}
	canon, err := redact.JSON(withoutMark(s.Part, wire.MarkKey(m.Provider)))
	if err != nil {
		return redact.String(s.counted())
	}
	return string(canon)
}

// snippet shows the words around the first difference on both sides:
// `: "10:00:00Z." became "10:02:00Z."`. a and b are redacted already
// (diffText); a word is redacted again for the rule a word can meet where
// the text around it cannot (a bare URL: its userinfo, its sensitive query
// values).
func snippet(a, b string, off int) string {
	word := func(s string) string {
		if off > len(s) {
			return ""
		}
		i, j := off, off
		for i > 0 && off-i < 24 && !isSpace(s[i-1]) {
			i--
		}
		for j < len(s) && j-off < 24 && !isSpace(s[j]) {
			j++
		}
		return redact.String(strings.ToValidUTF8(s[i:j], ""))
	}
	wa, wb := word(a), word(b)
	switch {
	case wa == "" && wb == "":
		return ""
	case off == len(a):
		return fmt.Sprintf(": the earlier one ends there, this one goes on with %q", wb)
	case off == len(b):
		return fmt.Sprintf(": this one ends there, the earlier one went on with %q", wa)
	}
	return fmt.Sprintf(": %q became %q", wa, wb)
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '"' }

// reordered reports the tools reordered: the same definitions, another
// order.
func reordered(a, b *Manifest) string {
	var da, db []string
	for _, s := range a.Segments {
		if s.Section == "tools" {
			da = append(da, s.Digest.String())
		}
	}
	for _, s := range b.Segments {
		if s.Section == "tools" {
			db = append(db, s.Digest.String())
		}
	}
	if slices.Equal(da, db) {
		return ""
	}
	sa, sb := slices.Clone(da), slices.Clone(db)
	slices.Sort(sa)
	slices.Sort(sb)
	if slices.Equal(sa, sb) {
		return "tools reordered (the same definitions in another order)"
	}
	return ""
}

// bindings names the template bindings whose values differ.
func bindings(a, b *Segment) string {
	if a.tmpl == nil || b.tmpl == nil {
		return ""
	}
	var changed []string
	for path, d := range b.tmpl.Bindings {
		if a.tmpl.Bindings[path] != d {
			changed = append(changed, path)
		}
	}
	slices.Sort(changed)
	switch {
	case len(changed) == 1:
		return "binding " + changed[0] + " changed"
	case len(changed) > 1:
		return "bindings " + strings.Join(changed, ", ") + " changed"
	case a.tmpl.Digest != b.tmpl.Digest:
		return "its template changed"
	}
	return ""
}

// changedKeys names the top-level members of two JSON objects that
// differ, in b's order.
func changedKeys(a, b []byte) string {
	ma, mb := members(a), members(b)
	if ma == nil || mb == nil {
		return ""
	}
	var keys []string
	for _, kv := range mb {
		if v, ok := lookup(ma, kv[0]); !ok || !equalJSON(v, kv[1]) {
			keys = append(keys, kv[0])
		}
	}
	for _, kv := range ma {
		if _, ok := lookup(mb, kv[0]); !ok {
			keys = append(keys, kv[0]+" (removed)")
		}
	}
	return strings.Join(keys, ", ")
}

func members(raw []byte) [][2]string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s[0] != '{' {
		return nil
	}
	out := [][2]string{}
	it := pjson.NewIter(s)
	for {
		k, _, v, _, ok := it.Next()
		if !ok {
			return out
		}
		out = append(out, [2]string{pjson.Unquote(k), v})
	}
}

func lookup(kvs [][2]string, key string) (string, bool) {
	for _, kv := range kvs {
		if kv[0] == key {
			return kv[1], true
		}
	}
	return "", false
}

func equalJSON(a, b string) bool {
	if a == b {
		return true
	}
	ca, errA := pjson.Encode([]byte(a))
	cb, errB := pjson.Encode([]byte(b))
	return errA == nil && errB == nil && string(ca) == string(cb)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
