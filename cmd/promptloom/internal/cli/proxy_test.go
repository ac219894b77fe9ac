package cli

import (
	"strings"
	"testing"
)

// The proxy's page says where the transcript is kept,
// and never the PostgreSQL password of --transcript postgres://….
func TestTheProxyPageHidesTheStoresPassword(t *testing.T) {
	for _, arg := range []string{
		"postgres://loom:Hunter2Secret@db.example:5432/loom?sslmode=disable",
		"postgresql://loom:Hunter2Secret@db.example/loom?session=run&sslpassword=Hunter2Secret",
	} {
		state := newPageVerifier(arg, nil).state()
		if strings.Contains(state, "Hunter2Secret") || !strings.Contains(state, "db.example") {
			t.Errorf("%s: the page says %q", arg, state)
		}
	}
}
