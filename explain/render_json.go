package explain

import (
	"io"
	"strconv"

	pjson "github.com/promptloom/promptloom/internal/json"
)

// writeStreamed writes e exactly as writeJSON would (indented by two
// spaces, no HTML escaping, a final newline), but a member at a time and
// the rows, lint warnings and traces one at a time, so the whole document
// is never held in memory: a 10,000-fragment explanation is written in
// pieces of one row each, and the prompt in pieces of 32 KiB.
// TestWriteJSONStreams holds the bytes to writeJSON's.
func writeStreamed(out io.Writer, e *Explanation) error {
	w := pjson.NewWriter(out)
	str := func(key, v string) {
		w.Member(key)
		w.String(v)
	}
	num := func(key string, v int) {
		w.Member(key)
		w.Int(v)
	}
	m := e.header()
	w.Member("system")
	if e.absent() {
		w.Raw(nil)
	} else {
		w.String(e.System)
	}
	str("schema", m.Schema)
	str("scope", m.Scope)
	str("boundary", m.Boundary)
	str("messages", m.Messages)
	str("call_role", m.CallRole)
	w.Member("actor_chain")
	w.Raw(m.ActorChain)
	str("root", m.Root)
	w.Member("fragments")
	if len(e.Fragments) == 0 {
		w.Value(e.Fragments) // null, or []
	} else {
		var row []byte
		w.BeginArray()
		for i := range e.Fragments {
			w.Item()
			row = appendRow(row[:0], &e.Fragments[i])
			w.Append(row)
		}
		w.EndArray()
	}
	str("whole_prompt_digest", m.WholePromptDigest.String())
	num("system_prompt_bytes", m.SystemPromptBytes)
	str("join_separator", m.JoinSeparator)
	num("join_separator_bytes", m.JoinSeparatorBytes)
	num("join_separator_count", m.JoinSeparatorCount)
	in, ex := e.counts()
	num("included", in)
	num("excluded", ex)
	if e.Budget != nil {
		w.Member("budget")
		w.Value(e.Budget)
	}
	items := func(key string, n int, item func(i int) any) {
		if n == 0 {
			return // omitempty
		}
		w.Member(key)
		w.BeginArray()
		for i := range n {
			w.Item()
			w.Value(item(i))
		}
		w.EndArray()
	}
	items("lint", len(e.Lint), func(i int) any { return e.Lint[i] })
	if e.Reminders != nil {
		w.Member("reminders")
		w.Value(e.Reminders)
	}
	items("traces", len(e.Traces), func(i int) any { return e.Traces[i] })
	return w.Close()
}

// appendRow appends r as encoding/json writes its wire form (rowJSON)
// indented as an item of the document's fragments: the hot loop of a large
// explanation, written without reflection or a second indenting pass.
func appendRow(b []byte, row *Row) []byte {
	const field = "\n      " // a member's line at depth 3
	r := row.segment()
	str := func(name, v string) {
		b = append(b, field...)
		b = append(b, name...)
		b = pjson.AppendStdString(b, v)
	}
	num := func(name string, v int) {
		b = append(b, field...)
		b = append(b, name...)
		b = strconv.AppendInt(b, int64(v), 10)
	}
	b = append(b, '{')
	str(`"id": `, r.ID)
	b = append(b, ',')
	str(`"source": `, row.Source)
	b = append(b, ',')
	str(`"producer": `, r.Producer)
	b = append(b, ',')
	str(`"bucket": `, r.Bucket)
	b = append(b, ',')
	b = append(b, field...)
	b = strconv.AppendBool(append(b, `"included": `...), r.Included)
	b = append(b, ',')
	str(`"reason": `, r.Reason)
	b = append(b, ',')
	num(`"bytes": `, r.Bytes)
	if row.Offset != nil {
		b = append(b, ',')
		num(`"offset": `, *row.Offset)
	}
	b = append(b, ',')
	str(`"digest": `, r.Digest.String())
	if r.Register != "" {
		b = append(b, ',')
		str(`"register": `, r.Register)
	}
	if r.Rank != nil {
		b = append(b, ',')
		num(`"rank": `, *r.Rank)
	}
	if len(r.Sources) > 0 {
		b = append(b, ',')
		b = append(b, field...)
		b = append(b, `"sources": [`...)
		for i, s := range r.Sources {
			if i > 0 {
				b = append(b, ',')
			}
			b = pjson.AppendStdString(append(b, "\n        "...), s)
		}
		b = append(b, "\n      ]"...)
	}
	if r.Tokens != nil {
		b = append(b, ',')
		num(`"tokens": `, *r.Tokens)
	}
	if r.Template != nil {
		b = appendIndented(append(append(b, ','), field...), `"template": `, r.Template)
	}
	if len(row.Spans) > 0 {
		b = appendIndented(append(append(b, ','), field...), `"spans": `, row.Spans)
	}
	return append(b, "\n    }"...)
}
