package json

import "testing"

// Without drops every member of the key, decoded, keeps the rest as
// written, and leaves an object with nothing else as {}.
func TestWithout(t *testing.T) {
	for _, c := range []struct{ raw, key, want string }{
		{`{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}`, "cache_control", `{"type":"text","text":"hi"}`},
		{`{ "cache_control" : {"type":"ephemeral"} , "text" : "a b" }`, "cache_control", `{"text":"a b"}`},
		{`{"cache\u005fcontrol":1,"x":[1, 2]}`, "cache_control", `{"x":[1, 2]}`},
		{`{"cache_control":1}`, "cache_control", `{}`},
		{`{"text":"hi"}`, "cache_control", `{"text":"hi"}`},
	} {
		if got := string(Without(c.raw, c.key)); got != c.want {
			t.Errorf("Without(%s, %q) = %s, want %s", c.raw, c.key, got, c.want)
		}
	}
}
