// Package transcript reads what package journal writes: a JSONL
// transcript of LLM calls, each line chained to the one before by its
// BLAKE3 hash, and judges it, in the manner of sumdb's tlog: pure
// functions over the lines and the keys a caller holds, nothing written.
//
// Each line decodes to a Line (Decode): its place in the chain, its kind,
// the session and call it names, and in Line.Body its kind's own members
// as one typed struct (Open, Close, SystemPrompt, Retained, Request,
// Outcome, Attempt, Refusal, Checkpoint), a Harn event's too. Verify reads a transcript a line at a
// time, each read once with internal/json, and says, for each call,
// whether every receipt resolves to retained bytes that re-derive it and
// its outcome is recorded (a CallReport), and for the whole, what it
// breaks: every problem is a *manifest.RuleError whose Rule is one of this
// package's constants, one condition each, so a caller tells problems
// apart with ==, never by reading Detail. Prove and CheckProof make and
// check the proof of one call for someone who sees nothing else of the
// transcript; ProveConsistency and CheckConsistency show that a run
// extends a checkpoint kept earlier. Logs gives each session's tree of
// calls for the tiles a proxy serves, and Requests each request body as
// it was sent. A Harn transcript (llm_transcript.jsonl) is read too, its
// receipts checked.
//
// Why a package of its own: the writer (journal) and every reader (the
// CLI, the run report, the cache's blame, the proxy's page) must read a
// line one way; here is that one way, with the rules as constants and the
// format in docs/transcript.md.
package transcript

import (
	"github.com/promptloom/promptloom"

	"golang.org/x/mod/sumdb/note"
)

// Options configure how a transcript is read and what it is held to. The
// zero value (or nil) is the default: lines up to
// promptloom.DefaultMaxBytes, no key.
type Options struct {
	// MaxLineBytes is the longest transcript line read (0:
	// promptloom.DefaultMaxBytes). A longer line is an error matching
	// promptloom.ErrTooLarge: it is never held in memory whole. A body
	// kept as segments may be no longer either.
	MaxLineBytes int
	// Verifier, when set, makes Verify (and Prove) fail unless every
	// session ends in a checkpoint signed by its key that holds for the
	// chain at its line: without it, anyone who can write a transcript can
	// rewrite a whole run consistently, and only its head hash changes.
	// CheckProof takes its key as an argument, not from here.
	Verifier note.Verifier
	// Cosigners, with Verifier, make Verify fail unless the last
	// checkpoint of every session carries valid cosignatures of at least
	// Quorum of these witness keys (witness.NewVerifier); Quorum 0 is all
	// of them. A signature cannot show that its writer showed everyone the
	// same run; a quorum of witnesses, each of which cosigns only trees
	// consistent with the last it cosigned for the origin, can.
	Cosigners []note.Verifier
	Quorum    int
	// KeepCalls, when positive, bounds what a report lists to the last
	// KeepCalls to 2*KeepCalls calls and refusals read (with any call
	// still waiting for its outcome): the rest are counted (Counts,
	// Refusals, Holds and OK count them), not listed. A verifier left
	// running over a transcript that only grows (the proxy's page) then
	// holds what it shows, not the whole run. 0 lists every call.
	KeepCalls int
}

func (o *Options) maxLine() int {
	if o == nil || o.MaxLineBytes <= 0 {
		return promptloom.DefaultMaxBytes
	}
	return o.MaxLineBytes
}
