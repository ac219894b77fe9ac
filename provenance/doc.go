// Package provenance builds a role's context from an event log so that
// every byte of the prompt can say where it came from, and no role reads
// what it was not allowed to.
//
// The story: several parties (a UK and an EU negotiator, say) share one
// append-only log of what happened. Before each model call, a role's
// context is assembled from what that role may see as of one moment of the
// log: the public offers, its own beliefs, summaries of earlier rounds, the
// brief its caller hands it. The assembler that writes the context gets
// nothing but a grant; every part it writes must cite what the grant handed
// out; the parts go through the same reducer as any other fragment, and the
// manifest records each part's register, rank and sources. A remark only the
// EU heard is then in no UK prompt and no UK manifest, and a replay of the
// log rebuilds every context byte for byte.
//
// The vocabulary:
//
//   - Log: the eventlog.Store, append-only. Each event has a position (seq),
//     a kind, an actor and an audience, apart from its payload. It is the only
//     state that is not derived.
//   - Fold: derived state (Beliefs, Chronicle) that applies the events it
//     claims, in order, and knows its position. CatchUp keeps folds in step
//     with the log and saves each beside its position, so a fold can be
//     dropped and rebuilt (Rebuild) with identical results.
//   - Slice: a read-only view at one log position that records everything it
//     hands out: OpenLog (events, filtered by a predicate on the envelope
//     alone), OpenEvents (a fixed run of events the caller hands over),
//     OpenBeliefs (a fold's beliefs, by scope; BeliefSlice.Scope refuses a
//     scope outside the grant with ErrNotGranted), OpenChronicle (closed
//     sections); Slice.Read hands out what it admits. A nil predicate admits
//     nothing; All admits everything. Given is a value from the caller.
//   - Reader: the protocol every slice satisfies (Upto, HandedOut), so an
//     application's own reader can take part in a grant too.
//   - Grant: a struct whose every field is a Reader, all at one
//     position. It is an ordinary Go struct, so the compiler cannot stop it
//     from holding a store; Assemble checks it at run time by reflection
//     instead: a field that is not a slice, a slice with a nil predicate,
//     slices at different positions, or a grant used before
//     (ErrInvalidGrant), and a fold not at the grant's position
//     (ErrStaleRead, checked before the assembler runs and, for beliefs, at
//     every read).
//   - Part: one piece of the context as the assembler writes it: a slot, a
//     register, a rank, text, and the sources it cites. A citation of
//     anything no slice handed out is ErrUncitedSource.
//   - Register: what kind of text a part is: binding (rules), considered
//     (what the role has read), craft (how to write) or generated (model-
//     written summaries, never canon). Chronicle prose must sit in a
//     generated part (ErrInvalidPart).
//   - Budget: an optional limit on the prompt, passed to Assemble. Parts are
//     shed by register and rank, never a binding one, and shed parts stay in
//     the manifest with the reason.
//   - Context: the result of Assemble: every part with its fate, what the
//     grant handed out, the prompt, the traces of the assembly's stages, and
//     the reduction and manifest behind them. Its JSON is the
//     plain-data description reports and golden tests keep.
package provenance
