package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/promptloom/promptloom/journal"
	"github.com/promptloom/promptloom/payload"
	"github.com/promptloom/promptloom/transcript"
)

// attempt is one recorded call for the Logical tests: its name, its
// body, what it came to (an error's message, or "" for a reply), and the
// time between the call before it and this one.
type attempt struct {
	name, body, failed string
	after              time.Duration
}

// logicalOf records the attempts in one session, verifies the transcript
// and groups its calls.
func logicalOf(t *testing.T, as ...attempt) ([][]int, []Recorded) {
	t.Helper()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var buf bytes.Buffer
	j := journal.New(&buf, &journal.Options{Session: "s", Clock: func() time.Time { return now }})
	for _, a := range as {
		now = now.Add(a.after)
		m := journal.ModelFunc(func(context.Context, journal.Request) (journal.Response, error) {
			if a.failed != "" {
				return journal.Response{}, errors.New(a.failed)
			}
			return journal.Response{Text: "ok"}, nil
		})
		body := fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":%q}]}`, a.body)
		j.Call(context.Background(), m, journal.Request{Call: a.name, Body: []byte(body), Provider: payload.Anthropic, Unattributed: true})
	}
	j.Close()
	rep, err := transcript.Verify(bytes.NewReader(buf.Bytes()), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v", err)
	}
	rs, err := FromTranscript(buf.Bytes(), rep)
	if err != nil {
		t.Fatal(err)
	}
	return Logical(rs), rs
}

func TestLogical(t *testing.T) {
	const tooMany = "HTTP 429 Too Many Requests: slow down"
	for _, tc := range []struct {
		name string
		as   []attempt
		want string
	}{
		{"a 429 retried", []attempt{{"t1", "hi", tooMany, 0}, {"t1", "hi", "", time.Second}}, "[[0 1]]"},
		{"two failures, then a reply", []attempt{{"t1", "hi", "HTTP 503 Service Unavailable", 0}, {"t1", "hi", "transport error: connection reset", time.Second}, {"t1", "hi", "", 8 * time.Second}}, "[[0 1 2]]"},
		{"a redirect followed", []attempt{{"t1", "hi", "HTTP 307 Temporary Redirect", 0}, {"t1", "hi", "", 0}}, "[[0 1]]"},
		{"another call between", []attempt{{"t1", "hi", tooMany, 0}, {"t2", "other", "", 0}, {"t1", "hi", "", time.Second}}, "[[0 2] [1]]"},
		{"sent again past the gap", []attempt{{"t1", "hi", tooMany, 0}, {"t1", "hi", "", 3 * time.Minute}}, "[[0] [1]]"},
		{"a 400 is not retried", []attempt{{"t1", "hi", "HTTP 400 Bad Request: no", 0}, {"t1", "hi", "", time.Second}}, "[[0] [1]]"},
		{"a cancelled call is not retried", []attempt{{"t1", "hi", "cancelled before the response: context canceled", 0}, {"t1", "hi", "", time.Second}}, "[[0] [1]]"},
		{"another body", []attempt{{"t1", "hi", tooMany, 0}, {"t1", "hello", "", time.Second}}, "[[0] [1]]"},
		{"another name", []attempt{{"t1", "hi", tooMany, 0}, {"t2", "hi", "", time.Second}}, "[[0] [1]]"},
		{"a reply is not retried", []attempt{{"t1", "hi", "", 0}, {"t1", "hi", "", time.Second}}, "[[0] [1]]"},
		{"not a status", []attempt{{"t1", "hi", "HTTP 42x Odd", 0}, {"t1", "hi", "", time.Second}}, "[[0] [1]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := logicalOf(t, tc.as...)
			if got := fmt.Sprint(g); got != tc.want {
				t.Errorf("logical calls %s, want %s", got, tc.want)
			}
		})
	}
}

// A failed attempt that was retried wrote nothing to the cache: Calls
// gives Run the retry alone.
func TestCallsLeaveOutRetriedAttempts(t *testing.T) {
	_, rs := logicalOf(t, attempt{"t1", "hi", "HTTP 429 Too Many Requests", 0}, attempt{"t1", "hi", "", time.Second},
		attempt{"t2", "hi", "HTTP 400 Bad Request", 0})
	calls := Calls(rs)
	if len(calls) != 2 || calls[0].Line != rs[1].Report.Line || calls[1].Line != rs[2].Report.Line {
		t.Errorf("calls %+v", calls)
	}
}
