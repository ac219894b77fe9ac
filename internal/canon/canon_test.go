package canon

import (
	"errors"
	"testing"
)

func TestEncode(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b": 1, "a": [true, false, null]}`, `{"a":[true,false,null],"b":1}`},
		{`"<a & b>\u2028"`, "\"<a & b>\u2028\""},
		{`"tab\there\u0001\u001f\"\\/"`, `"tab\there\u0001\u001f\"\\/"`},
		{`[1.0, 100, 1e21, 1e-7, 0.5, -0, 123456789012]`, `[1,100,1e+21,1e-7,0.5,0,123456789012]`},
		{`{"\u00e9":1,"z":2,"\ud83d\ude00":3,"\uffff":4}`, "{\"z\":2,\"\u00e9\":1,\"\U0001F600\":3,\"\uffff\":4}"},
		{` { "nested" : { "y":1 , "x" : "2" } } `, `{"nested":{"x":"2","y":1}}`},
	}
	for _, tt := range tests {
		got, err := Encode([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Encode(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	for _, in := range []string{`{"a":1,"a":2}`, `{"a":`, ``, `[1] 2`} {
		if _, err := Encode([]byte(in)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Encode(%q) error = %v, want ErrInvalid", in, err)
		}
	}
}

func TestEncodeIsIdempotent(t *testing.T) {
	in := `{"z":{"b":[1,2,{"d":"\n","c":null}],"a":"x"},"m":-1.5e-9}`
	once, err := Encode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Encode(once)
	if err != nil || string(twice) != string(once) {
		t.Errorf("re-encoding changed %s to %s (%v)", once, twice, err)
	}
}
