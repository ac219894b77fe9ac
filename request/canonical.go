package request

import (
	"encoding/hex"
	"strconv"

	"github.com/promptloom/promptloom/digest"
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
	if c := &m.Cache; asksCache(c) {
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
	b = pjson.AppendString(b, schema)
	b = append(b, `,"sections":[`...)
	for i, t := range m.sections() {
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

// asksCache says whether c asks anything of the cache, and so whether
// the manifest's JSON has a cache member.
func asksCache(c *payload.Cache) bool {
	return c.Auto != nil || c.Key != "" || c.Retention != "" || c.Mode != "" || c.Content != ""
}

// manifestJSON, segmentJSON and cacheJSON are the manifest's JSON form,
// member by member in the order MarshalJSON writes them.
type manifestJSON struct {
	Schema      string        `json:"schema"`
	Provider    string        `json:"provider"`
	Model       string        `json:"model,omitempty"`
	Counter     string        `json:"counter"`
	Segments    []segmentJSON `json:"segments"`
	Sections    []section     `json:"sections"`
	Cache       *cacheJSON    `json:"cache,omitempty"`
	Bytes       int           `json:"bytes"`
	Tokens      int           `json:"tokens"`
	ContentHash string        `json:"content_hash"`
}

type segmentJSON struct {
	Section  string                `json:"section"`
	Path     string                `json:"path"`
	Role     string                `json:"role,omitempty"`
	Type     string                `json:"type,omitempty"`
	Name     string                `json:"name,omitempty"`
	Fragment string                `json:"fragment,omitempty"`
	Reason   string                `json:"reason,omitempty"`
	Bytes    int                   `json:"bytes"`
	Digest   digest.Digest         `json:"digest"`
	Tokens   int                   `json:"tokens"`
	Cache    *payload.CacheControl `json:"cache,omitempty"`
}

type cacheJSON struct {
	Auto      *payload.CacheControl `json:"auto,omitempty"`
	Key       string                `json:"key,omitempty"`
	Retention string                `json:"retention,omitempty"`
	Mode      string                `json:"mode,omitempty"`
	Content   string                `json:"cached_content,omitempty"`
}

func (s *Segment) wire() segmentJSON {
	return segmentJSON{Section: s.Section, Path: s.Path, Role: s.Role, Type: s.Type, Name: s.Name,
		Fragment: s.Fragment, Reason: s.Reason, Bytes: s.Bytes, Digest: s.Digest, Tokens: s.Tokens, Cache: s.Cache}
}

// MarshalJSON writes the manifest as promptloom.request_manifest.v1:
// schema, provider, model, counter, segments, the totals per section
// (tools, system, messages), cache, bytes, tokens, content_hash. Its
// canonical form (keys sorted) is what ContentHash hashes.
func (m *Manifest) MarshalJSON() ([]byte, error) {
	w := manifestJSON{Schema: schema, Provider: m.Provider, Model: m.Model, Counter: m.Counter,
		Sections: m.sections(), Bytes: m.Bytes, Tokens: m.Tokens, ContentHash: m.ContentHash}
	if m.Segments != nil {
		w.Segments = make([]segmentJSON, len(m.Segments))
		for i := range m.Segments {
			w.Segments[i] = m.Segments[i].wire()
		}
	}
	if c := &m.Cache; asksCache(c) {
		w.Cache = &cacheJSON{Auto: c.Auto, Key: c.Key, Retention: c.Retention, Mode: c.Mode, Content: c.Content}
	}
	return pjson.MarshalRaw(w)
}

// MarshalJSON writes the segment as the manifest's JSON holds it: section,
// path, role, type, name, fragment, reason, bytes, digest, tokens, cache
// (not the raw JSON: the digest names it).
func (s Segment) MarshalJSON() ([]byte, error) { return pjson.MarshalRaw(s.wire()) }

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
