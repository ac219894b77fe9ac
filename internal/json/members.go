package json

import "iter"

// Members is an object's members, found in one pass over its text, so that
// a reader who asks for many members of one object, or for one after a long
// one, does not walk the object again for each (gjson's Get starts at the
// object's first byte). Its room is reused by the next Index.
type Members struct {
	keys, vals []string
}

// Index finds the members of raw, an object that Check accepted (its keys
// are then distinct); for anything else it finds none.
func (m *Members) Index(raw string) {
	m.keys, m.vals = m.keys[:0], m.vals[:0]
	it := NewIter(raw)
	if !it.obj {
		return
	}
	for {
		key, _, val, _, ok := it.Next()
		if !ok {
			return
		}
		m.keys, m.vals = append(m.keys, Unquote(key)), append(m.vals, val)
	}
}

// Check checks data as Check does and, in the same pass, finds the
// members of the object it is (none when it is not one). data must not
// change while m is read.
func (m *Members) Check(data []byte, o *Options) error {
	m.keys, m.vals = m.keys[:0], m.vals[:0]
	return checkInto(data, o, m)
}

// FromDoc sets m to the root object's members that Scan recorded of s
// into d: the members of a document scanned once, without a walk more.
func (m *Members) FromDoc(s string, d *Doc) {
	m.keys, m.vals = m.keys[:0], m.vals[:0]
	for _, mem := range d.Members {
		m.keys, m.vals = append(m.keys, mem.Key), append(m.vals, s[mem.Start:mem.End])
	}
}

// Lookup returns the value, as written, of the member named key.
func (m *Members) Lookup(key string) (string, bool) {
	for i, k := range m.keys {
		if k == key {
			return m.vals[i], true
		}
	}
	return "", false
}

// All yields the members in order: each key, decoded, and its value as
// written.
func (m *Members) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for i, k := range m.keys {
			if !yield(k, m.vals[i]) {
				return
			}
		}
	}
}
