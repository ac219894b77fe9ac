// Package witness is what a verifier of a promptloom transcript needs of
// its witnesses: the verifier of a witness's key. A witness (c2sp.org/
// tlog-witness, run by `promptloom witness`) cosigns a session's
// checkpoint only after a consistency proof shows the tree extends the
// last one it cosigned for that origin, so no two inconsistent trees of
// one origin ever carry its cosignature; a journal asks its witnesses at
// each checkpoint (journal.Options.Witnesses), and a verifier that trusts
// a quorum of them (transcript.Options.Quorum) checks their cosignatures
// (transcript.Options.Cosigners) with the verifiers NewVerifier makes.
//
// A witness key is its own key: Ed25519 with signature type 0x04
// (cosignature/v1, c2sp.org/tlog-cosignature), written in note's key text
// format, "name+hash+base64(0x04||public key)", from `promptloom keygen
// --witness`. It can never be taken for a note key, nor the other way
// round. docs/audit.md describes the protocol and the commands.
package witness

import (
	"github.com/promptloom/promptloom/internal/witness"

	"golang.org/x/mod/sumdb/note"
)

// ErrBadKey is NewVerifier's error for a key text that is not a witness's
// verifier key: not of the form name+hash+base64, a hash that does not
// match, or a key of another type (a note key from `promptloom keygen`
// without --witness is type 0x01). The message names the key and what is
// wrong with it.
var ErrBadKey = witness.ErrBadKey

// NewVerifier returns a note.Verifier of cosignature/v1 signatures by the
// witness whose verifier key is vkey. Given to note.Open beside the log's
// verifier, or as one of transcript.Options.Cosigners, it checks a cosigned
// checkpoint.
func NewVerifier(vkey string) (note.Verifier, error) { return witness.NewVerifier(vkey) }
