package pgtest

import (
	"slices"
	"testing"
)

// The newest major version is the largest number, not the last string.
func TestMajorOf(t *testing.T) {
	bins := []string{"/usr/lib/postgresql/15/bin/initdb", "/usr/lib/postgresql/9/bin/initdb", "/usr/lib/postgresql/16/bin/initdb"}
	newest := slices.MaxFunc(bins, func(a, b string) int { return majorOf(a) - majorOf(b) })
	if newest != "/usr/lib/postgresql/16/bin/initdb" || majorOf(bins[1]) != 9 {
		t.Errorf("newest %s, majorOf(9) %d", newest, majorOf(bins[1]))
	}
}
