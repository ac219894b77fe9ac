package template_test

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	texttemplate "text/template"
	"time"

	"github.com/promptloom/promptloom/harn/template"
)

// The benchmark of docs/performance.md: a template of about 100 KB (static
// text around a loop) rendered with n items, against text/template on the
// same template in Go's syntax, bindings decoded from the same JSON by
// both. Two sizes show the cost growing with the output.
//
//	go test -run '^$' -bench BenchmarkRender -benchmem ./harn/template/
//
// BenchmarkRatio alternates the two in each iteration and reports the ratio
// of their times (x-text/template), so load that comes and goes on a shared
// machine falls on both alike.

const benchBody = "- {{ loop.index }}. {{ item.name | upper }}: {{ item.desc }}{{ if item.done }} (done){{ end }}\n"
const benchBodyGo = "- {{ inc $i }}. {{ upper $item.name }}: {{ $item.desc }}{{ if $item.done }} (done){{ end }}\n"

func benchPage(loop string) string {
	var b strings.Builder
	para := "You are a careful assistant. Keep the todo list current and say what you changed.\n"
	for b.Len() < 48<<10 {
		b.WriteString(para)
	}
	b.WriteString(loop)
	for b.Len() < 100<<10 {
		b.WriteString(para)
	}
	return b.String()
}

func benchBindings(n int) []byte {
	items := make([]map[string]any, n)
	for i := range items {
		items[i] = map[string]any{"name": fmt.Sprintf("task %d", i), "desc": "a thing to do, described in a sentence or so", "done": i%3 == 0}
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	return b
}

type benchPair struct {
	harn     func() error
	goTmpl   func() error
	outBytes int
}

func benchSetup(b *testing.B, n int) benchPair {
	bindings := benchBindings(n)
	harn := benchPage("{{ for item in items }}" + benchBody + "{{ end }}")
	goSrc := benchPage("{{ range $i, $item := .items }}" + benchBodyGo + "{{ end }}")
	tp, err := template.Parse("bench.prompt", []byte(harn), nil)
	if err != nil {
		b.Fatal(err)
	}
	gt := texttemplate.Must(texttemplate.New("bench").Funcs(texttemplate.FuncMap{
		"inc": func(i int) int { return i + 1 }, "upper": strings.ToUpper,
	}).Parse(goSrc))
	r, err := tp.Render(bindings)
	if err != nil {
		b.Fatal(err)
	}
	var want strings.Builder
	var data any
	_ = json.Unmarshal(bindings, &data)
	if err := gt.Execute(&want, data); err != nil || want.String() != r.Text {
		b.Fatalf("the two templates differ: %v", err)
	}
	return benchPair{
		harn: func() error { _, err := tp.Render(bindings); return err },
		goTmpl: func() error {
			var data any
			if err := json.Unmarshal(bindings, &data); err != nil {
				return err
			}
			return gt.Execute(io.Discard, data)
		},
		outBytes: len(r.Text),
	}
}

func BenchmarkRatio(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		p := benchSetup(b, n)
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			var th, tg time.Duration
			i := 0
			for b.Loop() {
				first, second, t1, t2 := p.harn, p.goTmpl, &th, &tg
				if i%2 == 1 {
					first, second, t1, t2 = p.goTmpl, p.harn, &tg, &th
				}
				i++
				start := time.Now()
				if err := first(); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if err := second(); err != nil {
					b.Fatal(err)
				}
				*t1 += mid.Sub(start)
				*t2 += time.Since(mid)
			}
			b.ReportMetric(float64(th)/float64(tg), "x-text/template")
			b.ReportMetric(float64(th.Nanoseconds())/float64(i), "harn-ns/op")
			b.ReportMetric(float64(tg.Nanoseconds())/float64(i), "text/template-ns/op")
		})
	}
}

func BenchmarkRender(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		p := benchSetup(b, n)
		for _, e := range []struct {
			name string
			run  func() error
		}{{"harn", p.harn}, {"text-template", p.goTmpl}} {
			b.Run(fmt.Sprintf("%s/items=%d", e.name, n), func(b *testing.B) {
				b.SetBytes(int64(p.outBytes))
				for b.Loop() {
					if err := e.run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
