package options

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkTemplatedParse: options whose one system item renders a
// thousand-item loop (about 100 KB) with its provenance (spans, the
// bindings read and their digests), against options giving the same text
// as content, in one run.
func BenchmarkTemplatedParse(b *testing.B) {
	items := make([]map[string]any, 1000)
	for i := range items {
		items[i] = map[string]any{"name": "item-" + strconv.Itoa(i), "note": strings.Repeat("n", 60)}
	}
	bindings, _ := json.Marshal(map[string]any{"items": items, "cwd": "/srv/app"})
	tpl := `In {{ cwd }}:{{ for it in items }}\n- {{ loop.index }}. {{ it.name | upper }}: {{ it.note }}{{ end }}`
	templated := []byte(`{"system":[{"template":"` + tpl + `","bindings":` + string(bindings) + `}]}`)
	o, err := Parse(templated, nil)
	if err != nil {
		b.Fatal(err)
	}
	text, _ := json.Marshal(o.System[0].Body)
	plain := []byte(`{"system":[{"content":` + string(text) + `}]}`)
	for _, c := range []struct {
		name string
		in   []byte
	}{{"content", plain}, {"template", templated}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(o.System[0].Body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(c.in, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
