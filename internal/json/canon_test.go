package json

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func encode(t *testing.T, in string) string {
	t.Helper()
	out, err := Encode([]byte(in))
	if err != nil {
		t.Fatalf("Encode(%s): %v", in, err)
	}
	return string(out)
}

func check(t *testing.T, cases []struct{ in, want string }) {
	t.Helper()
	for _, c := range cases {
		if got := encode(t, c.in); got != c.want {
			t.Errorf("Encode(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// The tests named after Harn's are ported from the tests of
// crates/harn-vm/src/canonical_json.rs (burin-labs/harn), input written as
// the JSON text its json! literals stand for.

// object_keys_are_sorted_regardless_of_insertion_order
func TestObjectKeysAreSortedRegardlessOfInsertionOrder(t *testing.T) {
	check(t, []struct{ in, want string }{
		{`{"b": 1, "a": 2}`, `{"a":2,"b":1}`},
		{`{"a": 2, "b": 1}`, `{"a":2,"b":1}`},
	})
}

// sorting_does_not_depend_on_serde_map_iteration_order
func TestSortingDoesNotDependOnMapIterationOrder(t *testing.T) {
	check(t, []struct{ in, want string }{{`{"z":1,"m":2,"a":3}`, `{"a":3,"m":2,"z":1}`}})
}

// nested_objects_are_sorted_at_every_depth
func TestNestedObjectsAreSortedAtEveryDepth(t *testing.T) {
	check(t, []struct{ in, want string }{
		{`{"z": {"y": 1, "x": {"b": 2, "a": 3}}, "a": null}`, `{"a":null,"z":{"x":{"a":3,"b":2},"y":1}}`},
	})
}

// array_order_is_preserved_and_elements_are_canonicalized
func TestArrayOrderIsPreservedAndElementsAreCanonicalized(t *testing.T) {
	check(t, []struct{ in, want string }{
		{`[3, 1, 2]`, `[3,1,2]`},
		{`[{"b": 1, "a": 2}, {"d": 4, "c": 3}]`, `[{"a":2,"b":1},{"c":3,"d":4}]`},
	})
}

// keys_are_ordered_by_utf8_bytes_and_escaped_by_serde
func TestKeysAreOrderedByUTF8BytesAndEscapedBySerde(t *testing.T) {
	check(t, []struct{ in, want string }{
		{`{"": 1, " ": 2, "\u0001": 3, "é": 4, "\"q\"": 5, "a\\b": 6}`, `{"":1,"\u0001":3," ":2,"\"q\"":5,"a\\b":6,"é":4}`},
		{`{"a": 1, "A": 2, "0": 3, "_": 4}`, `{"0":3,"A":2,"_":4,"a":1}`},
	})
}

// scalars_and_empty_containers_round_trip
func TestScalarsAndEmptyContainersRoundTrip(t *testing.T) {
	for _, in := range []string{`null`, `true`, `42`, `"bare"`, `[]`, `{}`} {
		if got := encode(t, in); got != in {
			t.Errorf("Encode(%s) = %s", in, got)
		}
	}
}

// numbers_keep_serde_json_formatting_not_rfc_8785
func TestNumbersKeepSerdeJSONFormattingNotRFC8785(t *testing.T) {
	check(t, []struct{ in, want string }{{`{"n": [1.0, -0.0, 1.5]}`, `{"n":[1.0,-0.0,1.5]}`}})
}

// adjacent_integers_beyond_2_pow_53_stay_distinct_and_exact
func TestAdjacentIntegersBeyond2Pow53StayDistinctAndExact(t *testing.T) {
	check(t, []struct{ in, want string }{
		{`9007199254740992`, `9007199254740992`},
		{`9007199254740993`, `9007199254740993`},
		{`18446744073709551615`, `18446744073709551615`},
		{`-9223372036854775808`, `-9223372036854775808`},
		{`{"n": 12345678901234567890}`, `{"n":12345678901234567890}`},
	})
}

// astral_plane_keys_sort_by_utf8_bytes_not_utf16_code_units
func TestAstralPlaneKeysSortByUTF8BytesNotUTF16CodeUnits(t *testing.T) {
	check(t, []struct{ in, want string }{
		{`{"\ud83d\ude00": 1, "\uffff": 2, "z": 3}`, "{\"z\":3,\"\uffff\":2,\"\U0001F600\":1}"},
	})
}

// of_canonicalizes_serializable_values
func TestOfCanonicalizesSerializableValues(t *testing.T) {
	type identity struct {
		Z uint32 `json:"z"`
		A string `json:"a"`
	}
	got, err := Marshal(identity{Z: 1, A: "x"})
	if err != nil || string(got) != `{"a":"x","z":1}` {
		t.Errorf("Marshal = %s, %v", got, err)
	}
}

// of_surfaces_serialization_failure_instead_of_an_empty_hash_input
func TestOfSurfacesSerializationFailureInsteadOfAnEmptyHashInput(t *testing.T) {
	for _, v := range []any{math.NaN(), map[[2]byte]string{{1, 2}: "value"}, func() {}} {
		got, err := Marshal(v)
		if err == nil || err.Error() == "" || got != nil {
			t.Errorf("Marshal(%T) = %q, %v; want an error", v, got, err)
		}
	}
}

// serde_json's string escaping (its ESCAPE table in ser.rs): the quote and
// backslash, \b \t \n \f \r short, other control characters \u00xx in
// lower-case hex; '/', DEL, U+2028/U+2029 and non-ASCII raw. Escapes in the
// input are decoded, so equal strings written differently encode alike.
func TestStringEscapingIsSerdeJSONs(t *testing.T) {
	check(t, []struct{ in, want string }{
		{`"tab\there\u0001\u001F\u001f\"\\\/"`, `"tab\there\u0001\u001f\u001f\"\\/"`},
		{`"\b\f\n\r\t\u000b\u0000"`, `"\b\f\n\r\t\u000b\u0000"`},
		{`"\u007f\u00e9\u2028\u2029<&>"`, "\"\x7f\u00e9\u2028\u2029<&>\""},
		{"\"\x7f\u00e9\u2028\"", "\"\x7f\u00e9\u2028\""},
		{`"\ud83d\ude00"`, "\"\U0001F600\""},
	})
}

// serde_json reads a number with a fraction or an exponent as a double and
// writes it with ryu; an integer literal stays exact while it fits in u64
// (i64 when negative), and becomes a double past that; -0 is the double -0.
func TestNumbersAreReadAndWrittenAsSerdeJSONDoes(t *testing.T) {
	check(t, []struct{ in, want string }{
		{`0`, `0`},
		{`-0`, `-0.0`},
		{`-1`, `-1`},
		{`100`, `100`},
		{`1e2`, `100.0`},
		{`1E+2`, `100.0`},
		{`0.1`, `0.1`},
		{`0.10`, `0.1`},
		{`1e20`, `1e20`},
		{`1e16`, `1e16`},
		{`1e15`, `1000000000000000.0`},
		{`123456789012345678e-2`, `1234567890123456.8`},
		{`1.5e-7`, `1.5e-7`},
		{`1e-7`, `1e-7`},
		{`0.00001`, `0.00001`},
		{`0.000001`, `1e-6`},
		{`0.001234`, `0.001234`},
		{`1.7976931348623157e308`, `1.7976931348623157e308`},
		{`5e-324`, `5e-324`},
		{`1e-400`, `0.0`},
		{`-1e-400`, `-0.0`},
		{`123.456e5`, `12345600.0`},
		{`1.2345e30`, `1.2345e30`},
		{`-2.5e-10`, `-2.5e-10`},
		{`18446744073709551616`, `1.8446744073709552e19`},
		{`-9223372036854775809`, `-9.223372036854776e18`},
		{`9223372036854775808`, `9223372036854775808`},
	})
}

func TestEncodeRejects(t *testing.T) {
	tests := []struct{ name, in, path string }{
		{"empty", ``, ""},
		{"unterminated", `{"a":`, "a"},
		{"trailing value", `[1] 2`, ""},
		{"trailing comma", `[1,]`, "[1]"},
		{"leading zero", `[01]`, "[0]"},
		{"bare dot", `[1.]`, "[0]"},
		{"plus sign", `[+1]`, "[0]"},
		{"out of range", `{"n":[1e400]}`, "n[0]"},
		{"raw control character", "[\"a\x01\"]", "[0]"},
		{"unknown escape", `["\x"]`, "[0]"},
		{"lone leading surrogate", `["\ud83d"]`, "[0]"},
		{"lone trailing surrogate", `["\ude00x"]`, "[0]"},
		{"surrogate then not low", `["\ud83d\u0041"]`, "[0]"},
		{"invalid UTF-8", "[\"\xff\"]", ""},
		{"single quotes", `{'a':1}`, ""},
		{"NaN", `NaN`, ""},
	}
	for _, tt := range tests {
		_, err := Encode([]byte(tt.in))
		var e *Error
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &e) {
			t.Errorf("%s: Encode(%q) error = %v, want an *Error matching ErrInvalid", tt.name, tt.in, err)
			continue
		}
		if e.Path != tt.path {
			t.Errorf("%s: path = %q, want %q (%v)", tt.name, e.Path, tt.path, err)
		}
	}
}

func TestDuplicateKeyIsRejectedWithItsPath(t *testing.T) {
	in := `{"actor_chain":[{"role":"a"},{"role":"b","role":"c"}]}`
	_, err := Encode([]byte(in))
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrDuplicateKey) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("error = %v, want a duplicate key *Error", err)
	}
	if e.Path != "actor_chain[1].role" || e.Offset != strings.LastIndex(in, `"role"`) {
		t.Errorf("path %q offset %d, want actor_chain[1].role at %d", e.Path, e.Offset, strings.LastIndex(in, `"role"`))
	}
	if _, err := Encode([]byte(`{"a":1,"b":{"a":2}}`)); err != nil {
		t.Errorf("the same key in two objects is not a duplicate: %v", err)
	}
}

func TestDepthLimit(t *testing.T) {
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Encode([]byte(ok)); err != nil {
		t.Errorf("%d levels: %v", MaxDepth, err)
	}
	deep := "[" + ok + "]"
	if _, err := Encode([]byte(deep)); !errors.Is(err, ErrInvalid) {
		t.Errorf("%d levels: error = %v, want ErrInvalid", MaxDepth+1, err)
	}
}

func TestEncodeIsIdempotent(t *testing.T) {
	for _, in := range []string{
		`{"z":{"b":[1,2,{"d":"\n","c":null}],"a":"x"},"m":-1.5e-9,"f":[1.0,1e300,-0.0,0.30000000000000004]}`,
		`"\u2028\u0000é\ud83d\ude00"`,
	} {
		once := encode(t, in)
		if twice := encode(t, once); twice != once {
			t.Errorf("re-encoding changed %s to %s", once, twice)
		}
	}
}

func TestAppendStringIsCanonical(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\", strings.Repeat("é\x1f", 40)} {
		got := string(AppendString(nil, s))
		if back := encode(t, got); back != got {
			t.Errorf("AppendString(%q) = %s is not canonical (%s)", s, got, back)
		}
	}
}

// A path thousands of levels deep is cut to its two ends in an error.
func TestDeepPathIsCut(t *testing.T) {
	in := strings.Repeat("[", 3000) + `{"k":1,"k":2}` + strings.Repeat("]", 3000)
	_, err := Encode([]byte(in))
	var e *Error
	if !errors.As(err, &e) || len(e.Path) > 100 || !strings.HasSuffix(e.Path, "[0][0].k") || !strings.Contains(e.Path, "…") {
		t.Errorf("error %v: path %q", err, e.Path)
	}
}
