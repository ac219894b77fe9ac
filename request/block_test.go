package request

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"
)

// relaxed is what payload.Read accepts of a body, so what a part can hold.
var relaxed = &pjson.Options{LoneSurrogates: true, DuplicateKeys: true, LargeNumbers: true}

// sameAsRedactJSON holds the writer to redact.JSON of the part without its
// mark: the same bytes, or the same error. It reports whether the writer
// wrote the part itself.
func sameAsRedactJSON(t *testing.T, p payload.Part) bool {
	t.Helper()
	return sameAsRedactJSONMarked(t, p, "cache_control")
}

// sameAsRedactJSONMarked is sameAsRedactJSON for a provider whose blocks
// mark a breakpoint with the member named mark.
func sameAsRedactJSONMarked(t *testing.T, p payload.Part, mark string) bool {
	t.Helper()
	want, wantErr := redact.JSON(withoutMark(p, mark))
	w := blockWriter{mark: mark}
	fast := w.write(p)
	got, err := w.digestInput(p)
	switch {
	case (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()):
		t.Errorf("%s: error %v, redact.JSON's %v", p.Raw, err, wantErr)
	case fast && wantErr != nil:
		t.Errorf("%s: written, where redact.JSON refuses it: %v", p.Raw, wantErr)
	case !bytes.Equal(got, want):
		t.Errorf("%s:\n got %s\nwant %s", p.Raw, got, want)
	}
	// The text counted, as the writer saw it and as field finds it.
	for _, typ := range []string{"", "text"} {
		p.Type = typ
		text, quoted := w.countedText(p)
		slow := blockWriter{}
		if wantText, wantQuoted := slow.countedText(p); text != wantText || quoted != wantQuoted {
			t.Errorf("%s: counted %q (%v), field's %q (%v)", p.Raw, text, quoted, wantText, wantQuoted)
		}
	}
	return fast
}

func TestBlockWriterIsRedactJSON(t *testing.T) {
	mark := &payload.CacheControl{Type: "ephemeral"}
	for _, c := range []struct {
		raw  string
		fast bool // the writer, not redact.JSON, should write it
	}{
		{`{"type":"text","text":"hello"}`, true},
		{`{"type":"text","text":"a \"quoted\" word","inner":{"text":"not this"}}`, true},
		{`{"te\u0078t":"escaped key","type":"text"}`, true},
		{`{"text":5}`, true},
		{`[{"text":"an item"}]`, true},
		{`"a bare string"`, true},
		{` { "b" : 1 , "a" : [ 1 , 2 , { "d" : null , "c" : true } ] , "e" : false } `, true},
		{`{"text":"tab\tquote\"slash\/ unicode \u00e9\u2028 nul\u0000 del\u007f"}`, true},
		{`{"text":"\u0041\u005C\u002f\b\f\n\r"}`, true},
		{`{"k\u00e9y":"v","k\u00e8y":"w","key":"x","k":"y"}`, true},
		{`{"é":1,"e":2,"z":3,"ÿ":4,"日本":5,"😀":6,"\ud83d\ude00x":7}`, false},
		{`{"emoji":"\ud83d\ude00"}`, false},
		{`{"lone":"\ud800"}`, false},
		{`{"lone":"\udc00x"}`, false},
		{`{"n":[0,-0,1.0,1e2,1E+2,-1.5e-7,0.1,1e16,12345678901234567890,123456789012345678901,-9223372036854775808,-9223372036854775809,1e-400,5e-324]}`, true},
		{`{"n":1e999}`, false},
		{`{"n":-1e400}`, false},
		{`{"big":` + strings.Repeat("9", 400) + `}`, false},
		{`{"a":1,"a":2}`, false},
		{`{"b":{"a":1,"a":1}}`, false},
		{`{"a\u0062":1,"ab":2}`, false},
		{`{"note":"password: hunter22","ok":"AKIAIOSFODNN7EXAMPLE"}`, true},
		{`{"x-api-key":"k-123","n":1}`, false},
		{`{"Authorization":"Bearer abcdefghijklmnop"}`, false},
		{`{"nested":{"client_secret":{"deep":[1,2]}}}`, false},
		{`{"max_tokens":5,"tokenizer":"x"}`, false},
		{`{"monkey":1,"keyboard":2}`, true},
		{`{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}`, true},
		{`{"cache_control":{"type":"ephemeral"},"type":"text","text":"hi"}`, true},
		{`{"type":"text","cache_control":{"type":"ephemeral"}}`, true},
		{`{"cache\u005fcontrol":{"type":"ephemeral"},"z":1}`, true},
		{`{"cache_control":{"type":"ephemeral"}}`, true},
		{`{"inner":{"cache_control":{"type":"ephemeral"}},"type":"x"}`, true},
		{`[]`, true},
		{`{}`, true},
		{`[[],{},"",0]`, true},
		{strings.Repeat("[", maxBlockDepth) + strings.Repeat("]", maxBlockDepth), true},
		{strings.Repeat("[", maxBlockDepth+1) + strings.Repeat("]", maxBlockDepth+1), false},
		{strings.Repeat(`{"a":`, 500) + `1` + strings.Repeat(`}`, 500), false},
	} {
		for _, cc := range []*payload.CacheControl{nil, mark} {
			if cc != nil && c.raw[0] != '{' {
				continue
			}
			if err := pjson.Check([]byte(c.raw), relaxed); err != nil {
				t.Fatalf("%s: %v", c.raw, err)
			}
			p := payload.Part{Raw: []byte(c.raw), Cache: cc}
			if fast := sameAsRedactJSON(t, p); fast != c.fast {
				t.Errorf("%s (mark %v): written by the writer %v, want %v", c.raw, cc != nil, fast, c.fast)
			}
		}
	}
}

// Every part of the conformance vectors agrees too.
func TestBlockWriterOnVectors(t *testing.T) {
	bodies, _ := filepath.Glob("testdata/*.body.json")
	for _, path := range bodies {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := payload.Read(body, payload.Auto)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := r.Parts()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			sameAsRedactJSON(t, p)
		}
	}
}

func FuzzBlockWriter(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":"x\n"}`, `[1.50,"\u00e9"]`, `{"token":1}`, `{"a":{"a":1,"a":2}}`, `"\ud800"`, `1e999`} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, raw string, marked bool) {
		if pjson.Check([]byte(raw), relaxed) != nil {
			return
		}
		p := payload.Part{Raw: []byte(strings.TrimSpace(raw))}
		if marked && strings.HasPrefix(string(p.Raw), "{") {
			p.Cache = &payload.CacheControl{Type: "ephemeral"}
		}
		sameAsRedactJSON(t, p)
	})
}

// The keys mayBeSensitive passes at once hold none of the words, and every
// key Harn's rule finds credential-like holds one.
func TestMayBeSensitive(t *testing.T) {
	for _, key := range []string{"type", "text", "name", "id", "input", "content", "role", "description", "properties",
		"required", "items", "input_schema", "tool_use_id", "cache_control", "is_error"} {
		if mayBeSensitive(key) || holdsSensitiveWord(key) {
			t.Errorf("%s: may be sensitive", key)
		}
	}
	for _, key := range []string{"authorization", "Proxy-Authorization", "cookie", "Set-Cookie", "api_key", "X-Amz-Security-Token",
		"x-api-key", "X-Auth-Token", "x-csrf-token", "X-XSRF-TOKEN", "accessToken", "refresh_token", "id_token", "bearer_token",
		"clientSecret", "PASSWORD", "secret", "passwd", "private_key", "session-token", "my_token", "db_secret", "old-password",
		"stripe_api_key", "pass_word", "TOK_EN", "a" + strings.Repeat("b", 70)} {
		if !mayBeSensitive(key) {
			t.Errorf("%s: not flagged", key)
		}
		p := payload.Part{Raw: []byte(`{"` + key + `":{"x":1}}`)}
		sameAsRedactJSON(t, p)
	}
}

// OpenAI's blocks mark a breakpoint with prompt_cache_breakpoint: it is
// left out of the digest, and a cache_control member, which means nothing
// to OpenAI, is content.
func TestOpenAIMarkLeftOut(t *testing.T) {
	mark := &payload.CacheControl{Type: "explicit"}
	raw := `{"type":"input_text","text":"hi","prompt_cache_breakpoint":{"mode":"explicit"},"cache_control":{"type":"ephemeral"}}`
	p := payload.Part{Raw: []byte(raw), Type: "input_text", Cache: mark}
	if !sameAsRedactJSONMarked(t, p, "prompt_cache_breakpoint") {
		t.Error("the writer left the part to redact.JSON")
	}
	w := blockWriter{mark: "prompt_cache_breakpoint"}
	got, err := w.digestInput(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"cache_control":{"type":"ephemeral"},"text":"hi","type":"input_text"}`; string(got) != want {
		t.Errorf("digest input %s, want %s", got, want)
	}
}
