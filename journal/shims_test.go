package journal

import (
	pjson "github.com/promptloom/promptloom/internal/json"

	"golang.org/x/mod/sumdb/tlog"
)

// The verdicts transcript.Verify gives a call (CallReport.Status).
const (
	verified   = "ok"
	incomplete = "incomplete"
)

// maxProblems is how many of a transcript's own problems a Report lists.
const maxProblems = 1000

// tree is a session's tree of calls as a test forging checkpoints grows
// it: its leaves, and the root tlog computes.
type tree struct {
	n      int64
	leaves []tlog.Hash
}

func (t *tree) add(leaf tlog.Hash) { t.leaves = append(t.leaves, leaf); t.n++ }

func (t *tree) root() tlog.Hash {
	var stored []tlog.Hash
	for i, l := range t.leaves {
		more, _ := tlog.StoredHashesForRecordHash(int64(i), l, tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
			out := make([]tlog.Hash, len(ix))
			for k, x := range ix {
				out[k] = stored[x]
			}
			return out, nil
		}))
		stored = append(stored, more...)
	}
	h, _ := tlog.TreeHash(t.n, tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(ix))
		for k, x := range ix {
			out[k] = stored[x]
		}
		return out, nil
	}))
	return h
}

// unreadable is "" when line is JSON every reader reads alike, as
// transcript.Verify holds each line.
func unreadable(line []byte) string {
	if err := pjson.Check(line, nil); err != nil {
		return err.Error()
	}
	return ""
}
