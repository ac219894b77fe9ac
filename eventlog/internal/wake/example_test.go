package wake_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/promptloom/promptloom/eventlog/internal/wake"
)

// A waiter blocks until an append moves the head past what it has seen.
func ExampleHead() {
	var n wake.Notifier
	var head atomic.Int64
	read := func(context.Context) (int64, error) { return head.Load(), nil }

	done := make(chan int64)
	go func() {
		h, _ := wake.Head(context.Background(), &n, 0, read, 0)
		done <- h
	}()
	head.Store(3) // an append of three events...
	n.Wake()      // ...wakes the waiter
	fmt.Println(<-done)
	// Output: 3
}
