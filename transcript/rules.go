package transcript

import "github.com/promptloom/promptloom/manifest"

// The rules a transcript, a proof or a consistency proof breaks: the Rule
// of each *manifest.RuleError in a Report's Problems or a CallReport's
// Problem, and of CheckConsistency's error. Each names one condition, so
// a caller tells problems apart with errors.Is or ==, never by reading
// Detail; docs/transcript.md lists them. A call's problem may also carry a
// rule of the manifest itself (manifest.Validate's, such as
// segment_digest), from holding its manifest to its prompt.
const (
	// RuleNoCall: no call verified and no refusal recorded: a transcript
	// that proves nothing (an empty one too).
	RuleNoCall manifest.Rule = "no_call"
	// RuleTooManyProblems counts the problems past the first 1,000.
	RuleTooManyProblems manifest.Rule = "too_many_problems"
	// RuleFormat: the first line is neither a promptloom line nor a Harn
	// event.
	RuleFormat manifest.Rule = "format"
	// RuleProofAsTranscript: the first line is a proof's header: a proof
	// is checked by CheckProof, not Verify.
	RuleProofAsTranscript manifest.Rule = "proof_as_transcript"
	// RuleTornLine: the last line has no final newline.
	RuleTornLine manifest.Rule = "torn_line"
	// RuleUnreadable: a line is not a JSON object every reader reads
	// alike (not UTF-8, a duplicate key, half a surrogate pair, JSON but
	// not an object...).
	RuleUnreadable manifest.Rule = "unreadable"
	// RuleWhitespace: bytes around a promptloom line's object (a CRLF
	// line ending included), or a blank line in a promptloom transcript.
	RuleWhitespace manifest.Rule = "whitespace"
	// RuleChain: a line's prev is not the hash of the line before.
	RuleChain manifest.Rule = "chain"
	// RuleSeq: a line's seq is not one more than the line before's.
	RuleSeq manifest.Rule = "seq"
	// RuleAt: a line's at is not an RFC 3339 time.
	RuleAt manifest.Rule = "at"
	// RuleKind: a line has no kind string (a Harn event no type string),
	// or one that is not of the transcript's kinds.
	RuleKind manifest.Rule = "kind"
	// RuleContentHash: a retained value (a system prompt, a manifest,
	// tool schemas) does not hash to its content_hash, or a system_prompt
	// line has no content or content_hash string.
	RuleContentHash manifest.Rule = "content_hash"

	// RuleSessionID: a journal_open has no session id string, or an
	// empty one.
	RuleSessionID manifest.Rule = "session_id"
	// RuleSessionReopened: a journal_open of a session opened before.
	RuleSessionReopened manifest.Rule = "session_reopened"
	// RuleCloseCount: a journal_close's calls is not the number of its
	// session's requests.
	RuleCloseCount manifest.Rule = "close_count"
	// RuleSessionUnclosed: a session has no journal_close: the run was
	// cut short, or is still being written.
	RuleSessionUnclosed manifest.Rule = "session_unclosed"
	// RuleSessionNotOpen: a request, a refusal or a journal_close of a
	// session not open at its line (never opened, or closed).
	RuleSessionNotOpen manifest.Rule = "session_not_open"
	// RuleFollows: a journal_open's follows is not another session's id,
	// or names a session of the transcript not closed at its line.
	RuleFollows manifest.Rule = "follows"
	// RuleRefusal: a provider_call_refused line's reason is not a code
	// (lowercase letters, digits and _), its message not a string, its
	// body_bytes not an integer, its body_content_hash not a digest, or
	// its call not a string.
	RuleRefusal manifest.Rule = "refusal"

	// RuleAnsweredTwice: an outcome or attempt names a request answered
	// already.
	RuleAnsweredTwice manifest.Rule = "answered_twice"
	// RuleUnanswered: no response or error line answers the request (the
	// call is incomplete).
	RuleUnanswered manifest.Rule = "unanswered"
	// RuleOutcome: an outcome or attempt names a request_seq no earlier
	// request has, or another call, session or request hash than its
	// request's.
	RuleOutcome manifest.Rule = "outcome"
	// RuleOutcomeContentHash: a response or error does not hash to its
	// response_content_hash or error_content_hash, or a response's body to
	// its body_content_hash.
	RuleOutcomeContentHash manifest.Rule = "outcome_content_hash"

	// RuleReceipt: a request has no served_context object, or one not of
	// schema harn.llm.served_context.v1, or a receipt field it needs is
	// missing or malformed (a hash not a digest, a byte count not an
	// integer, an unknown payload_provider).
	RuleReceipt manifest.Rule = "receipt"
	// RuleRetained: a receipt names a content hash no retained line has.
	RuleRetained manifest.Rule = "retained"
	// RuleManifest: the retained manifest a request names does not read
	// as a manifest.
	RuleManifest manifest.Rule = "manifest"
	// RuleWholePromptDigest: system_prompt_content_hash is not the
	// manifest's whole_prompt_digest, or system_prompt_bytes not its
	// system_prompt_bytes: the receipt is not of the manifest.
	RuleWholePromptDigest manifest.Rule = "whole_prompt_digest"
	// RuleRedactedLength: the retained prompt's length is not the
	// manifest's, and its redaction placeholders do not make up the
	// difference (or claim more bytes sent than secrets can be).
	RuleRedactedLength manifest.Rule = "redacted_length"
	// RuleRequest: a request line has no request object, one without
	// messages, tools or parameters, or a call that is not a string.
	RuleRequest manifest.Rule = "request"
	// RuleRequestContent: a member of a request does not hash to its
	// receipt's <member>_content_hash (a Harn request's retained
	// messages too).
	RuleRequestContent manifest.Rule = "request_content"

	// RulePayloadSystem: payload_system_content_hash is not
	// system_prompt_content_hash, or payload_system_bytes not the
	// manifest's system_prompt_bytes: the body's system channel is not the
	// text the manifest certifies.
	RulePayloadSystem manifest.Rule = "payload_system"
	// RulePayloadUnreadable: the receipt records the request body's
	// system channel, but request.payload is missing or does not read as
	// its provider's shape.
	RulePayloadUnreadable manifest.Rule = "payload_unreadable"
	// RulePayloadContent: request.payload's system channel does not hash
	// to payload_system_content_hash, is not payload_system_bytes long, or
	// is not the retained system prompt's text.
	RulePayloadContent manifest.Rule = "payload_content"

	// RuleBodyTwice: an unattributed request retains its body in more
	// than one way (two of body, body_text and body_segments).
	RuleBodyTwice manifest.Rule = "body_twice"
	// RuleBodyContent: an unattributed request's body, body_text, or the
	// body its body_segments make, does not hash to its
	// body_content_hash (a segment altered), or its body_content_hash is
	// missing or not a digest.
	RuleBodyContent manifest.Rule = "body_content"
	// RuleSegments: an unattributed request's body_segments is not a
	// list of segments as written (an item neither a non-empty string, a
	// number nor a pair of numbers; an empty list), or names what its
	// session has not stored (a number past its pieces, a pair outside
	// its previous list).
	RuleSegments manifest.Rule = "segments"
	// RuleSegmentRepeated: body_segments stores a segment its session
	// stored already: each is stored once.
	RuleSegmentRepeated manifest.Rule = "segment_repeated"
	// RuleBodyTooLarge: the body body_segments make is longer than the
	// longest line a transcript holds (Options.MaxLineBytes).
	RuleBodyTooLarge manifest.Rule = "body_too_large"
	// RuleReceived: a request's received (the body as it came, when the
	// writer changed it before sending: Request.Received) is not an
	// object with its body_content_hash and the change in words, or a
	// change is given with no body received.
	RuleReceived manifest.Rule = "received"

	// RuleCheckpointSession: a checkpoint of a session the transcript
	// does not open.
	RuleCheckpointSession manifest.Rule = "checkpoint_session"
	// RuleCheckpointNote: a checkpoint's note is missing, or is not a
	// signed note of a checkpoint as written.
	RuleCheckpointNote manifest.Rule = "checkpoint_note"
	// RuleCheckpointSignature: a checkpoint is not signed by the
	// verifier key given.
	RuleCheckpointSignature manifest.Rule = "checkpoint_signature"
	// RuleCheckpointOrigin: a checkpoint's origin or text names another
	// session than its line's (a proof's: than its call's, or an origin
	// not of the key's name).
	RuleCheckpointOrigin manifest.Rule = "checkpoint_origin"
	// RuleCheckpointHead: a checkpoint's lines and head are not the chain
	// at the line before it, or its calls and root not its session's tree
	// of calls.
	RuleCheckpointHead manifest.Rule = "checkpoint_head"
	// RuleUnsigned: given a key, a session (or a Harn transcript) has no
	// checkpoint signed by it.
	RuleUnsigned manifest.Rule = "unsigned"
	// RuleUnsignedEnd: given a key, a session's last line is not a
	// checkpoint signed by it (a run still being written, or cut).
	RuleUnsignedEnd manifest.Rule = "unsigned_end"
	// RuleUnsignedLines: given a key, lines follow the last checkpoint
	// signed by it.
	RuleUnsignedLines manifest.Rule = "unsigned_lines"
	// RuleWitness: cosignatures cannot be checked: witness keys given
	// without the signer's verifier key, or a session's last checkpoint
	// does not read as a note to find them in.
	RuleWitness manifest.Rule = "witness"
	// RuleQuorum: a session's last checkpoint is cosigned by fewer
	// witnesses than the quorum.
	RuleQuorum manifest.Rule = "quorum"

	// RuleProveNoCall: Prove's call is not in the transcript.
	RuleProveNoCall manifest.Rule = "prove_no_call"
	// RuleProveAmbiguous: more than one call has Prove's call name.
	RuleProveAmbiguous manifest.Rule = "prove_ambiguous"
	// RuleProveUncovered: no checkpoint of its session covers Prove's
	// call, or the call has no outcome (so no leaf) yet.
	RuleProveUncovered manifest.Rule = "prove_uncovered"
	// RuleProve: the session's tree or the call's path in it could not be
	// computed.
	RuleProve manifest.Rule = "prove"

	// RuleProof: a proof is not as promptloom writes one: its header, its
	// three lines, a request then its outcome.
	RuleProof manifest.Rule = "proof"
	// RuleProofLeaf: a proof's path does not lead from its call to the
	// checkpoint's root, or its checkpoint signs fewer lines than reach
	// its request.
	RuleProofLeaf manifest.Rule = "proof_leaf"

	// RuleConsistency: a consistency proof cannot be made or checked as
	// given: no key, not the proof as written, a checkpoint that does not
	// open, no signed checkpoint of its session in the transcript, a tree
	// that cannot be computed.
	RuleConsistency manifest.Rule = "consistency"
	// RuleConsistencyOrigin: the two checkpoints are of two logs (another
	// run).
	RuleConsistencyOrigin manifest.Rule = "consistency_origin"
	// RuleConsistencyCutBack: the later tree is smaller than the earlier:
	// the run was cut back.
	RuleConsistencyCutBack manifest.Rule = "consistency_cut_back"
	// RuleConsistencyFork: the later tree does not extend the earlier.
	RuleConsistencyFork manifest.Rule = "consistency_fork"
)
