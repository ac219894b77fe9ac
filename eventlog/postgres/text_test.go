package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/eventlog"
)

// Text PostgreSQL cannot hold is refused before anything is sent, as every
// store refuses a bad draft: eventlog.ErrInvalidDraft, naming the draft and
// the field.
func TestBadTextIsAnInvalidDraft(t *testing.T) {
	for _, tt := range []struct {
		d    eventlog.Draft
		want string
	}{
		{eventlog.Draft{Kind: "k\x00"}, `draft 1: invalid event draft: kind "k\x00"`},
		{eventlog.Draft{Kind: "k", Actor: "a\xff"}, `draft 1 (k): invalid event draft: actor "a\xff"`},
		{eventlog.Draft{Kind: "k", Audience: []string{"uk", "e\x00u"}}, `draft 1 (k): invalid event draft: audience role "e\x00u"`},
	} {
		err := checkText([]eventlog.Draft{{Kind: "ok"}, tt.d})
		if !errors.Is(err, eventlog.ErrInvalidDraft) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("checkText(%+v) = %v, want %s… matching eventlog.ErrInvalidDraft", tt.d, err, tt.want)
		}
	}
	if err := checkText([]eventlog.Draft{{Kind: "k", Actor: "日本", Audience: []string{"uk"}}}); err != nil {
		t.Errorf("checkText of good text = %v", err)
	}
}
