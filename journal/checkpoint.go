package journal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/internal/witness"
	"github.com/promptloom/promptloom/journal/tiles"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Signed checkpoints (docs/transcript.md, "Checkpoints"). The chain proves
// that no line of a transcript was changed, but its hashes are unkeyed:
// whoever can write the file can rewrite a whole run consistently. A
// journal given Options.Signer therefore writes, at Close and every
// Options.CheckpointEvery calls, a journal_checkpoint line holding a note
// (golang.org/x/mod/sumdb/note, Ed25519) over the chain at the line before
// it. The note's text is a C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint),
// the form Go's checksum database, Certificate Transparency logs and their
// witnesses read: the session's origin, then the size and root of a Merkle
// tree (golang.org/x/mod/sumdb/tlog, RFC 6962) whose leaves are the
// session's calls in the order their outcomes were written, then two
// extension lines with the chain's line count and head hash. Checkpoints
// in the text promptloom wrote before (chain.CheckpointHeader) still verify.

// checkpointer is a journal's signer, its session's tree of calls, and the
// witnesses it asks to cosign each checkpoint.
type checkpointer struct {
	signer    note.Signer
	every     int64
	witnesses []*witnessState
	open      string       // the chain hash of the session's journal_open line
	hashes    chain.Hashes // the stored hashes of the tree of calls: its root, proofs
	records   [][]byte     // each call's record (their count is the tree's size), for tiles
	last      tiles.Log    // the latest checkpoint written
	errs      []error      // cosignatures that failed, reported by Close
}

// ErrNotCosigned is in the error Close returns when a witness did not
// cosign a checkpoint (Options.Witnesses): the calls and the checkpoint
// are recorded, without that witness's cosignature.
var ErrNotCosigned = errors.New("journal: a witness did not cosign")

// witnessState is a witness and the tree size it last cosigned for this
// session (tlog-witness's "old size").
type witnessState struct {
	url  string
	size int64
}

func newCheckpointer(o *Options) *checkpointer {
	if o == nil || o.Signer == nil {
		return nil
	}
	c := &checkpointer{signer: o.Signer, every: int64(max(o.CheckpointEvery, 0))}
	for _, u := range o.Witnesses {
		c.witnesses = append(c.witnesses, &witnessState{url: u})
	}
	return c
}

// opened notes the hash of the session's journal_open line, which its
// origin names.
func (c *checkpointer) opened(hash string) {
	if c != nil {
		c.open = hash
	}
}

// pending is a call added by outcome and not yet committed.
type pending struct {
	record []byte
	hashes int // len(c.hashes) before the call's were added
	cp     *tiles.Log
}

// outcome adds the call whose outcome line b just wrote to the tree, and
// writes a checkpoint after it when one is due. commit keeps the call, or
// forgets it when the lines were not written.
func (c *checkpointer) outcome(ctx context.Context, b *lineBuilder, session, requestHash string) (*pending, error) {
	if c == nil {
		return nil, nil
	}
	p := &pending{record: chain.CallRecord(requestHash, b.t.Prev), hashes: len(c.hashes)}
	n := int64(len(c.records)) + 1 // the tree's size with this call
	hs, err := tlog.StoredHashesForRecordHash(n-1, tlog.RecordHash(p.record), c.hashes)
	if err != nil {
		return nil, fmt.Errorf("journal: checkpoint: %w", err)
	}
	c.hashes = append(c.hashes, hs...)
	if c.every > 0 && n%c.every == 0 {
		if p.cp, err = c.write(ctx, b, session, n); err != nil {
			c.hashes = c.hashes[:p.hashes]
			return nil, err
		}
	}
	return p, nil
}

// commit keeps the call outcome added (written is whether its lines were
// written), or forgets it.
func (c *checkpointer) commit(p *pending, written bool) {
	if c == nil || p == nil {
		return
	}
	if !written {
		c.hashes = c.hashes[:p.hashes]
		return
	}
	c.records = append(c.records, p.record)
	if p.cp != nil {
		c.last = *p.cp
	}
}

// close writes the checkpoint that ends a session, after its
// journal_close.
func (c *checkpointer) close(ctx context.Context, b *lineBuilder, session string) (*tiles.Log, error) {
	if c == nil {
		return nil, nil
	}
	return c.write(ctx, b, session, int64(len(c.records)))
}

// reset forgets the session's calls (its chain was cut back).
func (c *checkpointer) reset() {
	if c != nil {
		c.open, c.hashes, c.records, c.last = "", nil, nil, tiles.Log{}
	}
}

// write appends a checkpoint of the chain as it stands in b, signed and
// cosigned by the witnesses that agree. It returns the log as the
// checkpoint signs it.
func (c *checkpointer) write(ctx context.Context, b *lineBuilder, session string, n int64) (*tiles.Log, error) {
	root, err := tlog.TreeHash(n, c.hashes)
	if err != nil {
		return nil, fmt.Errorf("journal: checkpoint: %w", err)
	}
	cp := chain.Checkpoint{Origin: chain.Origin(c.signer.Name(), session, c.open), Session: session, Lines: b.t.Seq, Head: b.t.Prev, Calls: n, Root: root}
	msg, err := note.Sign(&note.Note{Text: cp.Text()}, c.signer)
	if err != nil {
		return nil, fmt.Errorf("journal: checkpoint: %w", err)
	}
	msg = append(msg, c.cosign(ctx, n, msg)...)
	b.line(chain.KindCheckpoint, "session", chain.Quote(session), "note", chain.Quote(string(msg)))
	return &tiles.Log{Checkpoint: msg, Size: n}, nil
}

// cosign asks every witness, at once, to cosign the checkpoint msg of a
// tree of n calls, and returns the signature lines of those that did. A
// witness that last cosigned another size than the one it is asked from
// says which (409), and is asked once more from there. A witness that
// refuses or cannot be reached leaves the checkpoint without its
// cosignature, and Close reports it.
func (c *checkpointer) cosign(ctx context.Context, n int64, msg []byte) []byte {
	if len(c.witnesses) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, witnessTimeout)
	defer cancel()
	lines := make([][]byte, len(c.witnesses))
	errs := make([]error, len(c.witnesses))
	var wg sync.WaitGroup
	for i, w := range c.witnesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines[i], errs[i] = c.ask(ctx, w, n, msg)
		}()
	}
	wg.Wait()
	var out []byte
	for i, w := range c.witnesses {
		if errs[i] != nil {
			c.errs = append(c.errs, fmt.Errorf("%w: the checkpoint of %d call(s): %w", ErrNotCosigned, n, errs[i]))
			continue
		}
		w.size = n
		out = append(out, lines[i]...)
	}
	return out
}

// witnessTimeout bounds the wait for the witnesses at a checkpoint: the
// journal holds its lock meanwhile.
const witnessTimeout = 10 * time.Second

func (c *checkpointer) ask(ctx context.Context, w *witnessState, n int64, msg []byte) ([]byte, error) {
	old := w.size
	for try := 0; ; try++ {
		proof, err := c.proveTree(n, old)
		if err != nil {
			return nil, err
		}
		lines, err := witness.Cosign(ctx, nil, w.url, old, proof, msg)
		var refused *witness.Error
		if try == 0 && errors.As(err, &refused) && refused.Status == http.StatusConflict && refused.Size != old && refused.Size <= n {
			old = refused.Size
			continue
		}
		return lines, err
	}
}

// proveTree is the consistency proof from the tree of its first old calls
// to the tree of n, which the stored hashes hold (n may be the call being
// added).
func (c *checkpointer) proveTree(n, old int64) (tlog.TreeProof, error) {
	if old == 0 || old == n {
		return nil, nil
	}
	return tlog.ProveTree(n, old, c.hashes)
}

// Log is the journal's session as its latest checkpoint signs it, with
// the records of every call since (for tiles.Handler to serve). ok is
// false until a checkpoint is written, and for a journal without a Signer.
func (j *Journal) Log() (log tiles.Log, ok bool) {
	if j == nil {
		return tiles.Log{}, false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.cp == nil || j.cp.last.Checkpoint == nil {
		return tiles.Log{}, false
	}
	log = j.cp.last
	log.Records = j.cp.records[:len(j.cp.records):len(j.cp.records)]
	return log, true
}
