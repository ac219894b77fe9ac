package eventlog_test

import (
	"testing"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/internal/testkit/storetest"
)

// The conformance suite: everything a Store promises (storetest.Run). Each
// driver runs it too.
func TestConformanceMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock func() time.Time) eventlog.Store {
		return eventlog.NewMemory(&eventlog.Options{Clock: clock})
	})
}
