package journal

import (
	"encoding/json"
	"testing"

	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
)

// A request's members are written as the canonical encoding of the whole
// object would write them.
func TestCanonicalObjectIsTheCanonicalEncoding(t *testing.T) {
	values := []string{
		`[{"role":"user","content":"a <b> & \u2028 é \"q\" \\ \n"}]`,
		`null`, `{"temperature":0.5,"max_tokens":10}`, `[{"name":"bash","input_schema":{"type":"object"}}]`,
		`{"system":"password: hunter22","z":[1,2.50,1e3]}`,
	}
	for n := 0; n <= 4; n++ {
		m := map[string]json.RawMessage{}
		for i, k := range []string{"tools", "messages", "payload", "parameters"}[:n] {
			v, err := redact.JSON([]byte(values[i+1-n%2]))
			if err != nil {
				t.Fatal(err)
			}
			m[k] = v
		}
		want, err := pjson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonicalObject(m); string(got) != string(want) {
			t.Errorf("%d members:\n got %s\nwant %s", n, got, want)
		}
	}
}
