package manifest

import (
	"testing"

	"github.com/promptloom/promptloom"
)

// TestNewDefaultsBlankCallRole: New with a blank call role attributes the
// manifest to defaultCallRole, as options naming no call_role are, so the
// manifest validates; a named role is kept as given.
func TestNewDefaultsBlankCallRole(t *testing.T) {
	r, err := promptloom.Reduce([]promptloom.Fragment{frag("a", promptloom.Before, "body")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ given, want string }{
		{"", "unattributed"},
		{" \t\n", "unattributed"},
		{"agent.main", "agent.main"},
	} {
		m := New(r, tc.given)
		if m.CallRole != tc.want {
			t.Errorf("New(%q).CallRole = %q, want %q", tc.given, m.CallRole, tc.want)
		}
		if err := Validate(m, r.System); err != nil {
			t.Errorf("New(%q) does not validate: %v", tc.given, err)
		}
	}
	// A manifest read from elsewhere with no call role is still refused.
	m := New(r, "x")
	m.CallRole = ""
	if err := Validate(m, r.System); err == nil {
		t.Error("Validate accepted an empty call_role")
	}
}
