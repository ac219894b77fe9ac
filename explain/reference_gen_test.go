package explain

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var texts = []string{
	"base", "a & b", "naïve", "日本語", "emoji 🎉", "line1\nline2", "tabs\tand", "<tag>",
	"`code`", "\"quoted\"", "## heading", "update the tracker", "alpha", "beta",
	" ", "\u00a0", "\u2003", "\r\n", "\n", "  ", "token: abc123", "ghp_" + strings.Repeat("Ab1", 12),
	"Bearer abcdefghijklmnop", "password=hunter2x", "-----BEGIN RSA PRIVATE KEY-----", "x-----END RSA PRIVATE KEY-----",
}

var toolNames = []string{"todo", "shell", "read", "write", "search"}
var capNames = []string{"vcs.git", "language.go", "language.rust", "net", "fs.write"}

func randText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(6); n >= 0; n-- {
		b.WriteString(texts[r.IntN(len(texts))])
		if r.IntN(2) == 0 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func pick(r *rand.Rand, from []string) []string {
	var out []string
	for _, s := range from {
		if r.IntN(3) == 0 {
			out = append(out, s)
		}
	}
	return out
}

func randOptions(r *rand.Rand) map[string]any {
	o := map[string]any{}
	switch r.IntN(5) {
	case 0:
		o["system"] = randText(r)
	case 1:
		var items []any
		for n := r.IntN(5); n > 0; n-- {
			if r.IntN(3) == 0 {
				items = append(items, randText(r))
				continue
			}
			it := map[string]any{"content": randScalar(r)}
			if r.IntN(3) == 0 {
				it["title"] = randScalar(r)
			}
			if r.IntN(3) == 0 {
				it["position"] = []string{"before", "after"}[r.IntN(2)]
			}
			if r.IntN(5) == 0 {
				it["enabled"] = []any{true, false, nil, "no", 0}[r.IntN(5)]
			}
			items = append(items, it)
		}
		o["system"] = items
	case 2:
		if r.IntN(4) == 0 {
			o["system"] = map[string]any{"mode": "replace", "content": randText(r)}
		}
	}
	if r.IntN(3) == 0 {
		var parts []any
		for i := r.IntN(4); i > 0; i-- {
			if r.IntN(8) == 0 {
				parts = append(parts, randScalar(r)) // skipped by Harn
				continue
			}
			p := map[string]any{[]string{"body", "body", "body", "content"}[r.IntN(4)]: randScalar(r)}
			if r.IntN(2) == 0 {
				p["id"] = []any{fmt.Sprintf("primary:part%d", i), "", 7}[r.IntN(3)]
			}
			if r.IntN(4) == 0 {
				p["source"] = []any{"agent", ""}[r.IntN(2)]
			}
			if r.IntN(3) == 0 {
				p["bucket"] = []string{"before", "after", " After ", "BEFORE", ""}[r.IntN(5)]
			}
			if r.IntN(6) == 0 {
				p["note"] = "ignored by Harn"
			}
			if ts := pick(r, toolNames); len(ts) > 0 {
				if r.IntN(6) == 0 {
					p["requires_tools"] = ts[0] // not a list: ignored
				} else {
					p["requires_tools"] = ts
				}
			}
			if cs := pick(r, capNames); len(cs) > 0 {
				p["requires_caps"] = cs
			}
			parts = append(parts, p)
		}
		o["_system_fragments"] = parts
	}
	if r.IntN(2) == 0 {
		prof := map[string]any{}
		var pfs []any
		for i := r.IntN(4); i > 0; i-- {
			key := []string{"body", "content"}[r.IntN(2)]
			pf := map[string]any{key: randScalar(r)}
			if r.IntN(5) == 0 {
				pf["content"] = randText(r) // body wins when both are given
			}
			if cs := pick(r, capNames); len(cs) > 0 {
				pf["requires_caps"] = cs
			}
			pfs = append(pfs, pf)
		}
		prof["prompt_fragments"] = pfs
		if cs := pick(r, capNames); len(cs) > 0 {
			prof["caps"] = cs
		}
		o["context_profile"] = prof
	}
	var tools []any
	for _, name := range pick(r, toolNames) {
		t := map[string]any{"name": name, "description": "does " + name}
		if r.IntN(8) == 0 {
			delete(t, "name") // skipped by Harn
		}
		if r.IntN(2) == 0 {
			t["guidance"] = randScalar(r)
		}
		if r.IntN(5) == 0 {
			t["active"] = false
		}
		tools = append(tools, t)
	}
	if r.IntN(6) == 0 {
		tools = append(tools, "not a tool")
	}
	if len(tools) > 0 {
		if r.IntN(2) == 0 {
			o["tools"] = tools
		} else {
			o["tools"] = map[string]any{"tools": tools}
		}
	}
	switch r.IntN(4) {
	case 0:
		o["capabilities"] = pick(r, capNames)
	case 2:
		o["capabilities"] = capNames[r.IntN(len(capNames))] // one capability
	case 1:
		flags := map[string]any{"off.cap": false, "nil.cap": nil}
		for _, c := range pick(r, capNames) {
			flags[c] = true
		}
		o["capabilities"] = flags
	}
	if r.IntN(3) == 0 {
		o["call_role"] = " agent.main "
	}
	return o
}

// randScalar is usually text, sometimes a value Harn shows as text.
func randScalar(r *rand.Rand) any {
	switch r.IntN(10) {
	case 0:
		return []any{42, 2.5, 3.0, -1, true, nil}[r.IntN(6)]
	case 1:
		return []any{"a", 1, map[string]any{"k": "v", "b": false}}
	}
	return randText(r)
}

func TestAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 3000 {
		data, err := json.Marshal(randOptions(r))
		if err != nil {
			t.Fatal(err)
		}
		e, err := Explain(data, nil)
		if err != nil {
			// Two identical included fragments make a manifest that does
			// not hold (duplicate (id, digest)); the reference has no such
			// rule, so skip those inputs.
			if strings.Contains(err.Error(), "duplicate included segment") {
				continue
			}
			t.Fatalf("case %d: Explain(%s, nil): %v", i, data, err)
		}
		if diff := cmp.Diff(reference(data), fromExplanation(e)); diff != "" {
			t.Fatalf("case %d: options %s\n(-reference +promptloom):\n%s", i, data, diff)
		}
	}
}

var updateVectors = flag.Bool("update-vectors", false,
	"rewrite testdata/vectors/*.json from the options in testdata/vectors/src, with the reference implementation")

// TestWriteVectors makes the project's own vectors: options written by hand
// in testdata/vectors/src, expectations computed by the independent
// reference implementation (never by promptloom itself), then reviewed.
func TestWriteVectors(t *testing.T) {
	if !*updateVectors {
		t.Skip("run with -update-vectors to regenerate testdata/vectors")
	}
	srcs, err := filepath.Glob("../testdata/vectors/src/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range srcs {
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		ref := reference(raw)
		rows := []map[string]any{}
		for _, r := range ref.Rows {
			rows = append(rows, map[string]any{"id": r.ID, "source": r.Source, "bucket": r.Bucket,
				"included": r.Included, "reason": r.Reason, "bytes": r.Bytes, "digest": r.Digest})
		}
		var system any
		if ref.System != nil {
			system = *ref.System
		}
		v := map[string]any{
			"options": json.RawMessage(raw),
			"expect": map[string]any{"system": system, "root": ref.Root, "call_role": ref.CallRole,
				"fragments": rows, "whole_prompt_digest": ref.Whole, "system_prompt_bytes": ref.Bytes,
				"included": ref.Inc, "excluded": ref.Exc},
		}
		out, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join("../testdata/vectors", filepath.Base(src))
		if err := os.WriteFile(dst, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
