package journal

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
	pjson "github.com/promptloom/promptloom/internal/json"
)

// redactions keeps, for one journal (one session), the redaction of each
// item of the last request body's top-level arrays (a message, a tool
// definition, a system block). An agent resends its history with every
// call, so redacting the whole body each time redacts the same messages
// again and again: with this, a body is redacted item by item, and only
// the items the previous body did not have are redacted at all. An item
// is known by its raw bytes: the same bytes at the same place as in the
// previous body (its history, compared as bytes, not hashed), or else the
// same BLAKE3 digest as one of its items.
//
// It cannot serve a stale redaction: an item's redaction depends on its
// bytes alone (the redactor's catalog is fixed, and a top-level array
// whose key is credential-like is never cut into items), and an item is
// matched by all its bytes or their digest. It cannot leak across
// sessions: each Journal has its own, and a journal's session is one.
type redactions struct {
	mu   sync.Mutex
	last *redactedBody
}

// redactedBody is a body redacted item by item: a copy of its raw bytes,
// its items, and their redactions by digest (those whose digest was
// taken). It is not changed once made.
type redactedBody struct {
	raw    []byte
	items  []redactedItem // in the order of their place in raw
	digest map[digest.Digest][]byte
}

// redactedItem is an item's place in the raw body, its digest (zero: not
// taken, as it was matched by place) and its redaction.
type redactedItem struct {
	a, z int
	d    digest.Digest
	r    []byte
}

// at is the item of b at a to z, if it has one there.
func (b *redactedBody) at(a, z int) (redactedItem, bool) {
	i, found := slices.BinarySearchFunc(b.items, a, func(x redactedItem, a int) int { return x.a - a })
	if !found || b.items[i].z != z {
		return redactedItem{}, false
	}
	return b.items[i], true
}

// minItemwise is the smallest body redacted item by item: below it the
// whole body is redacted at once, which is as quick.
const minItemwise = 4 << 10

// retainBody is retain for a request body (not KeepRaw): the same bytes
// and hash, byte for byte, made from the cached redactions of the items
// the previous body had and the redaction of the rest. A body that is not
// an object every reader reads alike is given to retain, which says why.
// scanned says raw's syntax was checked already (payload.Read scanned
// it): what is left to check is done on the way (each new item, value and
// key is redacted by redact.JSON, which refuses what the canonical
// reading refuses).
func (j *Journal) retainBody(raw []byte, scanned bool) (json []byte, hash string, err error) {
	if j.keepRaw || len(raw) < minItemwise {
		return j.retain(raw)
	}
	kept, ok := j.redactItemwise(raw, scanned)
	if !ok {
		return j.retain(raw)
	}
	return kept, digest.Bytes(kept).String(), nil
}

// rawMember is a member of a body's root object as it came.
type rawMember struct {
	key      string // decoded, for the canonical order
	tok, val string // the key's token and the value
	valAt    int    // where val starts in the body
}

// redactItemwise is redact.JSON(raw) made item by item (see redactions);
// false when raw is not a JSON object that the canonical reading accepts.
func (j *Journal) redactItemwise(raw []byte, scanned bool) ([]byte, bool) {
	if !scanned && pjson.Check(raw, nil) != nil {
		return nil, false
	}
	s := unsafe.String(unsafe.SliceData(raw), len(raw))
	start := 0
	for start < len(s) && (s[start] == ' ' || s[start] == '\t' || s[start] == '\n' || s[start] == '\r') {
		start++
	}
	if start == len(s) || s[start] != '{' {
		return nil, false
	}
	var members []rawMember
	for it := pjson.NewIter(s); ; {
		key, _, val, valAt, ok := it.Next()
		if !ok {
			break
		}
		members = append(members, rawMember{key: pjson.Unquote(key), tok: key, val: val, valAt: valAt})
	}
	slices.SortFunc(members, func(a, b rawMember) int { return strings.Compare(a.key, b.key) })
	for i := 1; i < len(members); i++ {
		if members[i].key == members[i-1].key {
			return nil, false // a key twice: retain says where
		}
	}
	j.redacted.mu.Lock()
	before := j.redacted.last
	j.redacted.mu.Unlock()
	head, tail, shift := 0, 0, 0
	if before != nil {
		head = commonPrefix(raw, before.raw)
		tail = commonSuffix(raw[head:], before.raw[min(head, len(before.raw)):])
		shift = len(before.raw) - len(raw)
	}
	// item is an item's redaction, at ra to rz in raw and at a to z in
	// kept.
	type item struct {
		ra, rz int
		d      digest.Digest
		a, z   int
	}
	var items []item
	// The members in the canonical order, each redacted alone (the key
	// as the canonical writer writes it, the value hidden whole when the
	// key is credential-like), an array's items one by one.
	kept := make([]byte, 0, len(raw)+len(raw)/8)
	kept = append(kept, '{')
	var scratch []byte
	for i, m := range members {
		if i > 0 {
			kept = append(kept, ',')
		}
		if m.val[0] != '[' {
			scratch = append(append(append(append(scratch[:0], '{'), m.tok...), ':'), m.val...)
			r, err := redact.JSON(append(scratch, '}'))
			if err != nil {
				return nil, false
			}
			kept = append(kept, r[1:len(r)-1]...)
			continue
		}
		probe, err := redact.JSON(append(append(append(scratch[:0], '{'), m.tok...), ":[]}"...))
		if err != nil {
			return nil, false
		}
		if !bytes.HasSuffix(probe, []byte(":[]}")) {
			kept = append(kept, probe[1:len(probe)-1]...) // a credential-like key: a placeholder
			continue
		}
		kept = append(kept, probe[1:len(probe)-2]...) // "key":[
		arr := pjson.NewIter(m.val)
		for n := 0; ; n++ {
			_, _, x, xAt, ok := arr.Next()
			if !ok {
				break
			}
			if n > 0 {
				kept = append(kept, ',')
			}
			ra := m.valAt + xAt
			rz := ra + len(x)
			var prev redactedItem
			hit := false
			switch {
			case before == nil:
			case rz <= head:
				prev, hit = before.at(ra, rz)
			case ra >= len(raw)-tail:
				prev, hit = before.at(ra+shift, rz+shift)
			}
			xb := raw[ra:rz]
			if !hit {
				prev.d = digest.Bytes(xb)
				if before != nil {
					prev.r, hit = before.digest[prev.d]
				}
			}
			if !hit {
				if prev.r, err = redact.JSON(xb); err != nil {
					return nil, false
				}
			}
			a := len(kept)
			kept = append(kept, prev.r...)
			items = append(items, item{ra: ra, rz: rz, d: prev.d, a: a, z: len(kept)})
		}
		kept = append(kept, ']')
	}
	kept = append(kept, '}')
	// The items' redactions, as slices of kept (which is not changed
	// again), for the session's next body.
	slices.SortFunc(items, func(a, b item) int { return a.ra - b.ra })
	next := &redactedBody{items: make([]redactedItem, len(items))}
	if before != nil && head == len(raw) && len(raw) == len(before.raw) {
		next.raw = before.raw // the same body again (a retry): its copy serves
	} else {
		next.raw = bytes.Clone(raw)
	}
	for i, x := range items {
		r := kept[x.a:x.z:x.z]
		next.items[i] = redactedItem{a: x.ra, z: x.rz, d: x.d, r: r}
		if x.d != (digest.Digest{}) {
			if next.digest == nil {
				next.digest = make(map[digest.Digest][]byte)
			}
			next.digest[x.d] = r
		}
	}
	j.redacted.mu.Lock()
	j.redacted.last = next
	j.redacted.mu.Unlock()
	return kept, true
}

// sameBytes reports whether a and b are the same slice of one array.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}
