package cli

import "testing"

func TestSplitURL(t *testing.T) {
	for _, c := range []struct{ in, store, session string }{
		{"postgres://h/db", "postgres://h/db", ""},
		{"postgres://h/db?session=run%201", "postgres://h/db", "run 1"},
		{"postgres://h/db?sslmode=disable&session=a&options=-c%20x;y", "postgres://h/db?sslmode=disable&options=-c%20x;y", "a"},
	} {
		store, session, err := splitURL(c.in)
		if err != nil || store != c.store || session != c.session {
			t.Errorf("splitURL(%q) = %q, %q, %v; want %q, %q", c.in, store, session, err, c.store, c.session)
		}
	}
	for _, bad := range []string{"postgres://h/db?session=%zz", "postgres://[::1"} {
		if _, _, err := splitURL(bad); err == nil {
			t.Errorf("splitURL(%q): no error", bad)
		}
	}
}
