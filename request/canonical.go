package request

import (
	"encoding/hex"
	"strconv"

	pjson "github.com/promptloom/promptloom/internal/json"
	"github.com/promptloom/promptloom/payload"
)

// appendCanonical appends the manifest's canonical JSON (keys sorted, no
// white space, serde_json's string escapes; content_hash as it stands),
// written member by member: the same bytes as pjson.Marshal of the
// manifest (a test holds them to it), without encoding it twice.
func (m *Manifest) appendCanonical(b []byte) []byte {
	b = append(b, `{"bytes":`...)
	b = strconv.AppendInt(b, int64(m.Bytes), 10)
	if c := m.Cache; c != nil {
		b = append(b, `,"cache":{`...)
		first := true
		sep := func(key string) {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(pjson.AppendString(b, key), ':')
		}
		if c.Auto != nil {
			sep("auto")
			b = appendMark(b, c.Auto)
		}
		for _, kv := range [][2]string{{"cached_content", c.Content}, {"key", c.Key}, {"mode", c.Mode}, {"retention", c.Retention}} {
			if kv[1] != "" {
				sep(kv[0])
				b = pjson.AppendString(b, kv[1])
			}
		}
		b = append(b, '}')
	}
	if m.ContentHash != "" {
		b = append(b, `,"content_hash":`...)
		b = pjson.AppendString(b, m.ContentHash)
	}
	b = append(b, `,"counter":`...)
	b = pjson.AppendString(b, m.Counter)
	if m.Model != "" {
		b = append(b, `,"model":`...)
		b = pjson.AppendString(b, m.Model)
	}
	b = append(b, `,"provider":`...)
	b = pjson.AppendString(b, m.Provider)
	b = append(b, `,"schema":`...)
	b = pjson.AppendString(b, m.Schema)
	b = append(b, `,"sections":[`...)
	for i, t := range m.Sections {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"bytes":`...)
		b = strconv.AppendInt(b, int64(t.Bytes), 10)
		b = append(b, `,"section":`...)
		b = pjson.AppendString(b, t.Section)
		b = append(b, `,"segments":`...)
		b = strconv.AppendInt(b, int64(t.Segments), 10)
		b = append(b, `,"tokens":`...)
		b = strconv.AppendInt(b, int64(t.Tokens), 10)
		b = append(b, '}')
	}
	b = append(b, `],"segments":`...)
	if m.Segments == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range m.Segments {
			if i > 0 {
				b = append(b, ',')
			}
			b = m.Segments[i].appendCanonical(b)
		}
		b = append(b, ']')
	}
	b = append(b, `,"tokens":`...)
	b = strconv.AppendInt(b, int64(m.Tokens), 10)
	return append(b, '}')
}

func (s *Segment) appendCanonical(b []byte) []byte {
	b = append(b, `{"bytes":`...)
	b = strconv.AppendInt(b, int64(s.Bytes), 10)
	if s.Cache != nil {
		b = append(b, `,"cache":`...)
		b = appendMark(b, s.Cache)
	}
	b = append(b, `,"digest":"blake3:`...)
	b = append(hex.AppendEncode(b, s.Digest[:]), '"')
	opt := func(key, v string) {
		if v != "" {
			b = append(append(append(b, ",\""...), key...), "\":"...)
			b = pjson.AppendString(b, v)
		}
	}
	opt("fragment", s.Fragment)
	opt("name", s.Name)
	b = append(b, `,"path":`...)
	b = pjson.AppendString(b, s.Path)
	opt("reason", s.Reason)
	opt("role", s.Role)
	b = append(b, `,"section":`...)
	b = pjson.AppendString(b, s.Section)
	b = append(b, `,"tokens":`...)
	b = strconv.AppendInt(b, int64(s.Tokens), 10)
	opt("type", s.Type)
	return append(b, '}')
}

func appendMark(b []byte, c *payload.CacheControl) []byte {
	b = append(b, '{')
	if c.TTL != "" {
		b = append(b, `"ttl":`...)
		b = append(pjson.AppendString(b, c.TTL), ',')
	}
	b = append(b, `"type":`...)
	b = pjson.AppendString(b, c.Type)
	return append(b, '}')
}
