package json

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestMembersFindEachMemberAsWritten(t *testing.T) {
	doc := `{"a": 1, "b\u0063": "x\"y", "d": {"e": [1, {"f": 2}]}, "": null}`
	if err := Check([]byte(doc), nil); err != nil {
		t.Fatal(err)
	}
	var m Members
	m.Index(doc)
	type kv struct{ K, V string }
	var got []kv
	for k, v := range m.All() {
		got = append(got, kv{k, v})
	}
	want := []kv{{"a", "1"}, {"bc", `"x\"y"`}, {"d", `{"e": [1, {"f": 2}]}`}, {"", "null"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if v, ok := m.Lookup("bc"); !ok || v != `"x\"y"` {
		t.Errorf(`Lookup("bc") = %q, %v`, v, ok)
	}
	if _, ok := m.Lookup("f"); ok {
		t.Error("Lookup found a member of a nested object")
	}
	m.Index(`[1, 2]`)
	if _, ok := m.Lookup("a"); ok {
		t.Error("an array's Index kept the object's members")
	}
}

func TestMembersCheckFindsWhatIndexFinds(t *testing.T) {
	docs := []string{
		`{"a": 1, "b\u0063": "x\"y", "d": {"e": [1, {"f": 2}]}, "": null}`,
		` { "k" : [ ] , "l":{} } `,
		`[{"a": 1}]`, `"s"`, `{}`,
	}
	for _, doc := range docs {
		var in, ch Members
		in.Index(doc)
		if err := ch.Check([]byte(doc), nil); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if !cmp.Equal(in.keys, ch.keys, cmpopts.EquateEmpty()) || !cmp.Equal(in.vals, ch.vals, cmpopts.EquateEmpty()) {
			t.Errorf("%s: Check found %q %q, Index %q %q", doc, ch.keys, ch.vals, in.keys, in.vals)
		}
	}
	var m Members
	if err := m.Check([]byte(`{"a": 1, "a": 2}`), nil); err == nil {
		t.Error("Check accepted a key given twice")
	}
}
