// Package redact removes secrets from text before it is hashed, so that a
// digest never lets anyone confirm a guessed secret and a manifest can be
// shared. It is Harn's redact_string and redact_json
// (crates/harn-vm/src/redact/), byte for byte:
//
//  1. A text that starts with http:// or https:// and, once trailing white
//     space is trimmed, holds no white space is a bare URL: it goes through
//     Harn's redact_url (userinfo removed, sensitive query values replaced,
//     the URL re-serialised as Harn's URL library writes it).
//  2. The catalog (docs/rules.md lists it) runs once, pattern by pattern in
//     order, each pattern over the output of the one before; every match
//     becomes <redacted:NAME:BYTE_LEN>. There is no second pass: a
//     placeholder can leave a match for an earlier pattern behind, and Harn
//     leaves it too.
//  3. A text over 256 KiB is scanned in overlapping windows instead, every
//     pattern over the original text, a match overlapping one already
//     claimed being dropped.
//
// String redacts a text; JSON redacts a JSON value as a content hash sees
// it. Every digest the library computes (digest.Of) and every string of a
// manifest goes through them. The engine, and Harn's tests ported to it,
// are in internal/redact.
package redact

import "github.com/promptloom/promptloom/internal/redact"

// String returns s with every secret of the catalog replaced by its
// placeholder, <redacted:NAME:BYTE_LEN>. When s holds nothing to redact,
// String returns s itself and allocates nothing.
func String(s string) string { return redact.String(s) }

// JSON is Harn's redact_json followed by its canonical encoding: the bytes
// stable_redacted_json_hash hashes, so a content hash of a manifest, a
// message list or a tool list is computed from it. In an object, a member
// whose key is credential-like (Harn's field_is_sensitive: Authorization,
// X-Api-Key, client_secret, anything ending in token, secret, password or
// apikey once lower-cased without '_' and '-'; "key" and "name" are not)
// has its value, whatever its type, replaced by the string "[redacted]"
// unread; every other string value is redacted as String redacts it; keys
// are kept. Numbers keep their exact digits, which is why this works from
// the bytes and not from a decoded value. The error is the JSON reader's,
// naming the path and offset of the first fault: raw must be JSON every
// reader reads alike (UTF-8, no key twice, no lone surrogate, numbers
// within range).
func JSON(raw []byte) ([]byte, error) { return redact.JSON(raw) }
