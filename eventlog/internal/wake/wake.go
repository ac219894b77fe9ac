// Package wake is the machinery behind every event store's Wait: a
// Notifier that an append (or Close) fires, and the loop that reads the
// head until it is past a position.
package wake

import (
	"context"
	"sync"
	"time"
)

// Notifier wakes every goroutine waiting on it: C returns a channel that the
// next Wake closes. The zero value is ready to use.
type Notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

// C returns the channel the next Wake closes.
func (n *Notifier) C() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// Wake closes the channel C returned, waking every goroutine waiting on it.
func (n *Notifier) Wake() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}

// Head is the loop every Wait shares: it returns head's answer once it is
// past after (or head's error, or ctx's). It takes the wake channel first,
// then reads the head, so that an append between the two still wakes it.
// With poll > 0 it also reads the head that often, for appends that fire no
// Notifier of this process.
func Head(ctx context.Context, n *Notifier, poll time.Duration, head func(context.Context) (int64, error), after int64) (int64, error) {
	var tick <-chan time.Time
	if poll > 0 {
		t := time.NewTicker(poll)
		defer t.Stop()
		tick = t.C
	}
	for {
		ch := n.C()
		h, err := head(ctx)
		if err != nil || h > after {
			return h, err
		}
		select {
		case <-ch:
		case <-tick:
		case <-ctx.Done():
			return h, ctx.Err()
		}
	}
}
