package options

import (
	"testing"
)

// FuzzParse: bad input gives an error, never a panic; what parses builds its
// fragments.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"system":"x"}`, `{"system":[{"text":"x"}]}`,
		`{"system":{"mode":"replace","content":" x "}}`, `{"_system_fragments":[{"body":"b","bucket":"after"}]}`,
		`{"tools":{"tools":[{"name":"t","guidance":"g","active":false}]},"capabilities":{"a":true}}`,
		`{"context_profile":{"caps":["c"],"prompt_fragments":[{"content":"p","requires_caps":["c"]}]}}`,
		`{"call_role":"a","mock_scope":"b"}`, `[`, "{\"system\":\"\xff\"}",
		`{"tools":[{"name":"safe","name":"shell"}]}`, `{"a":1,"\u0061":2}`, `{"x":[1e999,-0,9223372036854775808]}`,
		`{"caps":["net"]}`, `{"call_role":"  "}`, `{"system":[{"content":{"b":[1,2.5,null],"a":true},"enabled":"no"}]}`,
		`{"_system_fragments":[{"body":7,"bucket":" AFTER "},3,{"content":"c"}],"capabilities":null}`,
		`{"system":[{"content":"x","rank":-9223372036854775809}]}`,
		`{"system":[{"title":"T","template":" {{ x.y[-1] }}{{ for k, v in m }}{{ k }}={{ v | upper }}{{ end }} ","bindings":{"x":{"y":[1,"z"]},"m":{"a":"b"}}}]}`,
		`{"_system_fragments":[{"template":"{{ s[0] }}{{ m[\"q\"] }}","bindings":{"s":"é","m":{"q":[]}}}],"context_profile":{"prompt_fragments":[{"template":"{{ include \"x\" }}"}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := Parse(data, nil)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			return
		}
		for _, f := range o.Fragments() {
			if tm := f.Template; tm != nil {
				for _, s := range tm.Spans {
					if s.Start < 0 || s.End > len(f.Body) || s.Start >= s.End {
						t.Fatalf("%s: span %+v outside its body of %d bytes", f.ID, s, len(f.Body))
					}
				}
			}
		}
		_ = o.ActiveTools()
		for _, w := range o.Warnings {
			if w.Path == "" || w.Message == "" {
				t.Fatalf("warning without a path or message: %+v", w)
			}
		}
	})
}
