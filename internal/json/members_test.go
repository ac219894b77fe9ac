package json

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
