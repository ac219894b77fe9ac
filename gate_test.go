package promptloom

import (
	"testing"
)

func TestDecide(t *testing.T) {
	active := NewActive([]string{"todo", "shell"}, []string{"vcs.git"})
	tests := []struct {
		tools, caps []string
		want        Decision
	}{
		{nil, nil, Decision{true, "unconditional"}},
		{[]string{"todo", "shell"}, nil, Decision{true, "tool(s) present: todo, shell"}},
		{nil, []string{"vcs.git"}, Decision{true, "capabilit(ies) present: vcs.git"}},
		{[]string{"todo"}, []string{"vcs.git"}, Decision{true, "tool(s) present: todo"}},
		{[]string{"todo", "read", "write"}, nil, Decision{false, "requires tool `read` (not available)"}},
		{[]string{"read"}, []string{"net"}, Decision{false, "requires tool `read` (not available)"}},
		{[]string{"todo"}, []string{"vcs.git", "net", "fs"}, Decision{false, "requires capability `net` (not set)"}},
	}
	for _, tt := range tests {
		f := Fragment{RequiresTools: tt.tools, RequiresCaps: tt.caps}
		if got := Decide(&f, active); got != tt.want {
			t.Errorf("Decide(tools %v, caps %v) = %+v, want %+v", tt.tools, tt.caps, got, tt.want)
		}
	}
}
