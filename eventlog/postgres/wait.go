package postgres

import (
	"context"
	"time"

	"github.com/promptloom/promptloom/eventlog"
	"github.com/promptloom/promptloom/eventlog/internal/wake"

	"github.com/jackc/pgx/v5"
)

// Wait implements eventlog.Store: the store listens on the log's channel, on a
// connection of its own, from the first Wait until Close; every committed
// Append, from any process, notifies it.
func (p *store) Wait(ctx context.Context, after int64) (int64, error) {
	if err := p.listen(ctx); err != nil {
		return 0, err
	}
	return wake.Head(ctx, &p.notify, 0, p.Head, after)
}

type listener struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (l *listener) stop() {
	l.cancel()
	<-l.done
}

// listen starts the listener if it is not running. It returns once LISTEN
// has run, so no notification after it is missed.
func (p *store) listen(ctx context.Context) error {
	p.lmu.Lock()
	defer p.lmu.Unlock()
	if err := p.open(); err != nil {
		return err
	}
	if p.listener != nil {
		return nil
	}
	conn, err := p.listenConn(ctx)
	if err != nil {
		return p.wrap(err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	l := &listener{cancel: cancel, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		cancel()
		conn.Close(context.Background())
		return eventlog.ErrClosed
	}
	p.listener = l
	p.mu.Unlock()
	go p.listenLoop(lctx, conn, l.done)
	return nil
}

func (p *store) listenConn(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, p.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{p.channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// listenLoop wakes the waiters on every notification. When the connection
// fails it wakes them too (they re-read the head), and reconnects.
func (p *store) listenLoop(ctx context.Context, conn *pgx.Conn, done chan struct{}) {
	defer close(done)
	backoff := 50 * time.Millisecond
	for {
		if conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			var err error
			if conn, err = p.listenConn(ctx); err != nil {
				conn = nil
				continue
			}
			backoff = 50 * time.Millisecond
			if p.relistened != nil {
				p.relistened()
			}
			p.notify.Wake()
		}
		_, err := conn.WaitForNotification(ctx)
		if ctx.Err() != nil {
			conn.Close(context.Background())
			return
		}
		if err == nil && p.notified != nil {
			p.notified()
		}
		p.notify.Wake()
		if err != nil {
			conn.Close(context.Background())
			conn = nil
		}
	}
}
