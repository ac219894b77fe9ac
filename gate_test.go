package promptloom

import (
	"testing"
)

func TestGate(t *testing.T) {
	active := &Options{Tools: []string{"todo", "shell"}, Capabilities: []string{"vcs.git"}}
	tests := []struct {
		tools, caps []string
		want        decision
	}{
		{nil, nil, decision{true, "unconditional"}},
		{[]string{"todo", "shell"}, nil, decision{true, "tool(s) present: todo, shell"}},
		{nil, []string{"vcs.git"}, decision{true, "capabilit(ies) present: vcs.git"}},
		{[]string{"todo"}, []string{"vcs.git"}, decision{true, "tool(s) present: todo"}},
		{[]string{"todo", "read", "write"}, nil, decision{false, "requires tool `read` (not available)"}},
		{[]string{"read"}, []string{"net"}, decision{false, "requires tool `read` (not available)"}},
		{[]string{"todo"}, []string{"vcs.git", "net", "fs"}, decision{false, "requires capability `net` (not set)"}},
	}
	for _, tt := range tests {
		f := Fragment{RequiresTools: tt.tools, RequiresCaps: tt.caps}
		var got decision
		if got.included, got.reason = f.gateUnder(active); got != tt.want {
			t.Errorf("gateUnder(tools %v, caps %v) = %+v, want %+v", tt.tools, tt.caps, got, tt.want)
		}
	}
}
