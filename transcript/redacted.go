package transcript

import (
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/manifest"
)

// placeholder is one <redacted:NAME:LEN> in a retained prompt: its bytes
// there (start, end) and the length of what it replaced.
type placeholder struct{ start, end, sent int }

// placeholders finds the redaction placeholders of a retained prompt.
func placeholders(redacted string) []placeholder {
	var out []placeholder
	for at := 0; ; {
		i := strings.Index(redacted[at:], "<redacted:")
		if i < 0 {
			return out
		}
		at += i
		rest := redacted[at:]
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return out
		}
		colon := strings.LastIndexByte(rest[:end], ':')
		n, err := strconv.Atoi(rest[colon+1 : end])
		if colon <= len("<redacted") || err != nil || n < 0 {
			at += len("<redacted:")
			continue
		}
		out = append(out, placeholder{at, at + end + 1, n})
		at += end + 1
	}
}

// sentBytes re-derives the length of a prompt before redaction from its
// redacted text: each placeholder <redacted:NAME:LEN> replaced LEN bytes.
// It returns that length and the number of placeholders.
func sentBytes(redacted string) (sent, n int) {
	sent = len(redacted)
	ps := placeholders(redacted)
	for _, p := range ps {
		sent += p.sent - (p.end - p.start)
	}
	return sent, len(ps)
}

// redactedLen is the length of a retained text before redaction: its own
// length when it holds no placeholder.
func redactedLen(retained string) int {
	sent, _ := sentBytes(retained)
	return sent
}

// validateRedacted holds a manifest to a Harn prompt retained with
// redaction placeholders, whose length (once each placeholder stands for
// the bytes it replaced) is the manifest's system_prompt_bytes. Every rule
// of manifest.Validate is checked that the placeholders leave possible:
// the fields and counts, no two included segments sharing (id, digest),
// the bytes adding up, character boundaries and separators where the bytes
// are retained, and the digest of every included segment with no
// placeholder in it. Only the digest of a segment a placeholder falls in,
// and boundaries and separators inside a placeholder, cannot be checked:
// the bytes sent there are not in the transcript.
func validateRedacted(mf *manifest.Manifest, retained string) error {
	ps := placeholders(retained)
	// Where the manifest puts a separator, in the bytes sent.
	sep := map[int]bool{}
	off, k := 0, 0
	for i := range mf.Segments {
		s := &mf.Segments[i]
		if !s.Included {
			continue
		}
		if k++; k > 1 {
			sep[off], sep[off+1] = true, true
			off += 2
		}
		off += max(s.Bytes, 0)
	}
	// The prompt as sent, with each placeholder's bytes standing in as
	// ASCII (separators where the manifest has them): the structural rules
	// then judge the retained bytes and pass over the ones not retained.
	var b strings.Builder
	from := 0
	type span struct{ start, end int } // a placeholder's bytes, as sent
	var hidden []span
	for _, p := range ps {
		b.WriteString(retained[from:p.start])
		at := b.Len()
		for j := range p.sent {
			if sep[at+j] {
				b.WriteByte('\n')
			} else {
				b.WriteByte('x')
			}
		}
		hidden = append(hidden, span{at, at + p.sent})
		from = p.end
	}
	b.WriteString(retained[from:])
	sent := b.String()
	if err := manifest.ValidateStructure(mf, sent); err != nil {
		return err
	}
	off, k = 0, 0
	for i := range mf.Segments {
		s := &mf.Segments[i]
		if !s.Included {
			continue
		}
		if k++; k > 1 {
			off += 2
		}
		end := off + s.Bytes
		covered := false
		for _, h := range hidden {
			if h.start < end && off < h.end || h.start == h.end && off <= h.start && h.start <= end {
				covered = true
				break
			}
		}
		if got := digest.Of(sent[off:end]); !covered && got != s.Digest {
			return &manifest.RuleError{Rule: ruleSegmentDigest, ID: s.ID, Offset: off, Want: s.Digest.String(), Got: got.String(),
				Detail: "included segment `" + s.ID + "` digest " + s.Digest.String() + " does not match retained bytes " + got.String()}
		}
		off = end
	}
	return nil
}

// ruleSegmentDigest is manifest.Validate's rule for a segment whose digest
// is not its bytes', which validateRedacted checks as Validate does.
const ruleSegmentDigest manifest.Rule = "segment_digest"
