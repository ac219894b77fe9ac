package manifest_test

import (
	"strings"
	"testing"

	"github.com/promptloom/promptloom"
	"github.com/promptloom/promptloom/manifest"
)

// Layout places every included body where the reduced system string holds
// it, and skips the excluded ones.
func TestLayoutPlacesEveryIncludedBody(t *testing.T) {
	frags := []promptloom.Fragment{
		promptloom.SystemItem(0, "", "first body", promptloom.Before),
		promptloom.ToolGuidance("absent", "never sent"),
		promptloom.SystemItem(1, "", "second, longer body", promptloom.Before),
		promptloom.ToolGuidance("todo", "third"),
	}
	r, err := promptloom.Reduce(frags, &promptloom.Options{Tools: []string{"todo"}})
	if err != nil {
		t.Fatal(err)
	}
	m := manifest.New(r, "")
	var ids []string
	for off, s := range m.Layout() {
		ids = append(ids, s.ID+"="+r.System[off:off+s.Bytes])
	}
	if err := manifest.Validate(m, r.System); err != nil {
		t.Fatal(err)
	}
	want := "system[0]=first body|system[1]=second, longer body|tool:todo.guidance=third"
	if got := strings.Join(ids, "|"); got != want {
		t.Fatalf("layout %q, want %q", got, want)
	}
	var nilManifest *manifest.Manifest
	for range nilManifest.Layout() {
		t.Fatal("a nil manifest has no layout")
	}
}
