package postgres

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptloom/promptloom/journal"
)

// cutter is a TCP proxy between a store and the server that reads the
// protocol's messages both ways and, when armed, cuts a connection at one
// of them: after the server's answer to a COMMIT has been run (the answer
// is not passed on), or before the client's first statement naming
// transcript_lines (the server never gets it). It passes everything else
// on as it came.
type cutter struct {
	ln     net.Listener
	server string
	// afterCommit cuts at the next CommandComplete of a COMMIT: the
	// transaction is committed, and the client never hears so.
	afterCommit atomic.Bool
	// beforeLines cuts before the next client message holding
	// "transcript_lines": the insert and the COMMIT never reach the server.
	beforeLines atomic.Bool
	// down closes every new connection at once: the server out of reach.
	down atomic.Bool
	// atCommit, when set, is called at the next CommandComplete of a
	// COMMIT, and the connection is then cut as for afterCommit.
	atCommit atomic.Pointer[func()]
	cuts     atomic.Int32

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// newCutter starts a cutter in front of dsn's server, stopped when the
// test ends, and returns it with dsn pointing at it (sslmode=disable: the
// cutter reads the protocol in the clear).
func newCutter(t *testing.T, dsn string) (*cutter, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln, server: u.Host}
	if u.Port() == "" {
		c.server = net.JoinHostPort(u.Hostname(), "5432")
	}
	u.Host = ln.Addr().String()
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	c.wg.Go(c.serve)
	t.Cleanup(func() {
		ln.Close()
		c.mu.Lock()
		for _, conn := range c.conns {
			conn.Close()
		}
		c.mu.Unlock()
		c.wg.Wait()
	})
	return c, u.String()
}

func (c *cutter) serve() {
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		if c.down.Load() {
			client.Close()
			continue
		}
		server, err := net.Dial("tcp", c.server)
		if err != nil {
			client.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, client, server)
		c.mu.Unlock()
		cut := sync.OnceFunc(func() { client.Close(); server.Close() })
		c.wg.Go(func() { defer cut(); c.pass(client, server, true, cut) })
		c.wg.Go(func() { defer cut(); c.pass(server, client, false, cut) })
	}
}

// pass copies the messages read from src to dst, one at a time, until
// either side closes or a cut armed for this direction comes. The client's
// first message (the startup message) has no type byte.
func (c *cutter) pass(src, dst net.Conn, fromClient bool, cut func()) {
	r := bufio.NewReader(src)
	startup := fromClient
	for {
		var head []byte
		if startup {
			head = make([]byte, 4)
		} else {
			head = make([]byte, 5)
		}
		if _, err := io.ReadFull(r, head); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[len(head)-4:])) - 4
		if n < 0 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		switch {
		case fromClient && bytes.Contains(body, []byte("transcript_lines")) && c.beforeLines.CompareAndSwap(true, false):
			c.cuts.Add(1)
			cut()
			return
		case !fromClient && !startup && head[0] == 'C' && string(body) == "COMMIT\x00" && c.afterCommit.CompareAndSwap(true, false):
			c.cuts.Add(1)
			cut()
			return
		case !fromClient && !startup && head[0] == 'C' && string(body) == "COMMIT\x00" && c.atCommit.Load() != nil:
			if f := c.atCommit.Swap(nil); f != nil {
				(*f)()
				c.cuts.Add(1)
				cut()
				return
			}
		}
		startup = false
		if _, err := dst.Write(append(head, body...)); err != nil {
			return
		}
	}
}

// A call whose request line is committed but whose COMMIT's answer is lost
// is a call like any other: the sink finds its lines in the chain and
// reports the append done, the journal goes on, and the chain verifies.
// (Before, the call failed as not sent though its request was in the
// chain, every later call of the session was refused as another writer's,
// and the session never closed.)
func TestPostgresLostCommitAnswer(t *testing.T) {
	_, direct := open(t)
	cut, dsn := newCutter(t, direct)
	s, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	j := journal.NewSink(s.Sink("s1"), &journal.Options{Clock: clock(), Session: "s1"})
	// The chain's first append (its row is made in the same transaction)
	// and a later one.
	for i, call := range []string{"c0", "c1"} {
		cut.afterCommit.Store(true)
		if _, err := j.Call(ctx, echo, request(t, call, i)); err != nil {
			t.Fatalf("the call whose COMMIT's answer was lost: %v", err)
		}
		if cut.cuts.Load() != int32(i+1) {
			t.Fatalf("%d cuts, want %d", cut.cuts.Load(), i+1)
		}
	}
	record(t, j, "d", 2)
	if rep := verify(t, read(t, s, "s1"), nil); len(rep.Calls) != 4 {
		t.Errorf("%d calls, want 4", len(rep.Calls))
	}
}

// A connection cut before the insert reaches the server: the lines are not
// in the chain, the append fails, and the next one follows the last whole
// line.
func TestPostgresCutBeforeCommit(t *testing.T) {
	_, direct := open(t)
	cut, dsn := newCutter(t, direct)
	s, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := s.Sink("c")
	line := func(text string) func(journal.Tail) ([]byte, error) {
		return func(journal.Tail) ([]byte, error) { return []byte(text + "\n"), nil }
	}
	// The insert's text is sent the first time a connection runs it (pgx
	// prepares it then), so the first append is the one cut.
	cut.beforeLines.Store(true)
	err = k.Append(ctx, line(`{"n":1}`))
	if err == nil || errors.Is(err, ErrUnconfirmed) || !strings.Contains(err.Error(), "chain c: lines 1 to 1 were not written") || cut.cuts.Load() != 1 {
		t.Fatalf("the append cut before its insert: %v (%d cuts)", err, cut.cuts.Load())
	}
	if err := k.Append(ctx, line(`{"n":2}`)); err != nil {
		t.Fatal(err)
	}
	if err := k.Append(ctx, line(`{"n":3}`)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "c"); string(got) != "{\"n\":2}\n{\"n\":3}\n" {
		t.Errorf("chain %q", got)
	}
}

// The COMMIT's answer is lost and the server stays out of reach: the
// append is ErrUnconfirmed, naming its lines; the next append, the server
// back, finds them in the chain and follows them.
func TestPostgresLostCommitAnswerUnreachable(t *testing.T) {
	_, direct := open(t)
	cut, dsn := newCutter(t, direct)
	defer func(d time.Duration) { settleFor = d }(settleFor)
	settleFor = 200 * time.Millisecond
	// One connection: the append's, so that looking for its lines needs
	// a new one, which the cutter refuses.
	s, err := Open(ctx, dsn+"&pool_max_conns=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := s.Sink("c")
	line := func(text string) func(journal.Tail) ([]byte, error) {
		return func(journal.Tail) ([]byte, error) { return []byte(text + "\n"), nil }
	}
	if err := k.Append(ctx, line(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	cut.down.Store(true)
	cut.afterCommit.Store(true)
	err = k.Append(ctx, line(`{"n":2}`))
	if !errors.Is(err, ErrUnconfirmed) || !strings.Contains(err.Error(), "chain c: lines 2 to 2") {
		t.Fatalf("the append whose answer was lost, the server out of reach: %v", err)
	}
	cut.down.Store(false)
	if err := k.Append(ctx, line(`{"n":3}`)); err != nil {
		t.Fatalf("the next append, the server back: %v", err)
	}
	if got := read(t, s, "c"); string(got) != "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n" {
		t.Errorf("chain %q", got)
	}
}

// The append's context ends as the server runs its COMMIT (a client gone
// from the proxy mid-call), and the answer is lost: the lines went in, so
// the append succeeded, and says so; looking for them is not bound by the
// context that ended.
func TestPostgresLostCommitAnswerCancelled(t *testing.T) {
	_, direct := open(t)
	cut, dsn := newCutter(t, direct)
	s, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := s.Sink("c")
	line := func(text string) func(journal.Tail) ([]byte, error) {
		return func(journal.Tail) ([]byte, error) { return []byte(text + "\n"), nil }
	}
	if err := k.Append(ctx, line(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	cancelAt := func() { cancel() }
	cut.atCommit.Store(&cancelAt)
	if err := k.Append(actx, line(`{"n":2}`)); err != nil || cut.cuts.Load() != 1 || actx.Err() == nil {
		t.Fatalf("the append whose context ended as its COMMIT ran: %v (%d cuts)", err, cut.cuts.Load())
	}
	if err := k.Append(ctx, line(`{"n":3}`)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "c"); string(got) != "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n" {
		t.Errorf("chain %q", got)
	}
}
