package options

import (
	"encoding/json"
	"strings"

	"github.com/promptloom/promptloom/internal/canon"
	"github.com/tidwall/gjson"
)

// DefaultMaxBytes is the largest input Parse accepts unless told otherwise.
const DefaultMaxBytes = 64 << 20

// ParseOption configures Parse.
type ParseOption func(*parseConfig)

type parseConfig struct{ maxBytes int }

// MaxBytes sets the largest input Parse accepts.
func MaxBytes(n int) ParseOption { return func(c *parseConfig) { c.maxBytes = n } }

// Parse reads Harn-shaped options. Input over the size limit, invalid UTF-8
// and malformed JSON are rejected before anything is read, with the limit or
// the offset in the error; a bad value is rejected with its JSON path.
func Parse(data []byte, opts ...ParseOption) (*Options, error) {
	cfg := parseConfig{maxBytes: DefaultMaxBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if len(data) > cfg.maxBytes {
		return nil, errorf(ErrTooLarge, "", -1, "input is %d bytes, over the limit of %d", len(data), cfg.maxBytes)
	}
	if off := canon.InvalidUTF8(data); off >= 0 {
		return nil, errorf(ErrInvalidUTF8, "", off, "invalid UTF-8")
	}
	if err := checkSyntax(data); err != nil {
		return nil, err
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return nil, errorf(ErrType, "", 0, "must be a JSON object, got %s", kind(root))
	}
	o := &Options{CallRole: DefaultCallRole}
	var callRole, mockScope gjson.Result
	err := eachKey(root, "", func(key string, v gjson.Result) error {
		switch key {
		case "system":
			return o.parseSystem(v)
		case "_system_fragments":
			return o.parsePrimaryParts(v)
		case "context_profile":
			return o.parseProfile(v)
		case "tools":
			return o.parseTools(v)
		case "capabilities":
			caps, err := parseCaps(v, "capabilities")
			o.Capabilities = caps
			return err
		case "reminders":
			return o.parseReminders(v)
		case "call_role":
			callRole = v
			return nil
		case "mock_scope":
			mockScope = v
			return nil
		case "actor_chain":
			if v.Type == gjson.Null {
				return nil
			}
			// It is copied into the manifest, whose content hash is taken
			// over a canonical encoding: it must have one.
			if _, err := canon.Encode([]byte(v.Raw)); err != nil {
				return errorf(ErrValue, "actor_chain", v.Index, "cannot be written canonically: %v", err)
			}
			o.ActorChain = json.RawMessage(v.Raw)
			return nil
		}
		return nil // other keys belong to the call, not to the prompt
	})
	if err != nil {
		return nil, err
	}
	if err := o.parseCallRole(callRole, mockScope); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *Options) parseCallRole(role, scope gjson.Result) error {
	r, err := optString(role, "call_role")
	if err != nil {
		return err
	}
	s, err := optString(scope, "mock_scope")
	if err != nil {
		return err
	}
	if r != "" && s != "" && r != s {
		return errorf(ErrConflict, "mock_scope", scope.Index, "%q conflicts with call_role %q (mock_scope is its alias)", s, r)
	}
	if r == "" {
		r = s
	}
	if strings.TrimSpace(r) != "" {
		o.CallRole = r
	}
	return nil
}

func (o *Options) parseSystem(v gjson.Result) error {
	switch {
	case v.Type == gjson.Null:
		return nil
	case v.Type == gjson.String:
		s := v.String()
		o.SystemText = &s
		return nil
	case v.IsArray():
		return eachItem(v, func(i int, item gjson.Result) error {
			it, err := parseSystemItem(item, i)
			o.SystemItems = append(o.SystemItems, it)
			return err
		})
	case v.IsObject():
		return o.parseReplacement(v)
	}
	return errorf(ErrType, "system", v.Index, "must be a string, a list or {\"mode\":\"replace\",\"content\":...}, got %s", kind(v))
}

func (o *Options) parseReplacement(v gjson.Result) error {
	var mode, content gjson.Result
	err := eachKey(v, "system", func(key string, val gjson.Result) error {
		switch key {
		case "mode":
			mode = val
		case "content":
			content = val
		default:
			return errorf(ErrUnknownKey, "system", val.Index,
				"unknown key %q: the replacement root takes only \"mode\" and \"content\"", key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !mode.Exists() {
		return errorf(ErrMissing, "system", v.Index, "an object must be the replacement root {\"mode\":\"replace\",\"content\":...}: missing \"mode\"")
	}
	if mode.Type != gjson.String || mode.String() != "replace" {
		return errorf(ErrValue, "system.mode", mode.Index, "must be \"replace\", got %s", mode.Raw)
	}
	if !content.Exists() {
		return errorf(ErrMissing, "system", v.Index, "replacement root is missing \"content\"")
	}
	if content.Type != gjson.String {
		return errorf(ErrType, "system.content", content.Index, "must be a string, got %s", kind(content))
	}
	c := content.String()
	o.Replacement = &c
	return nil
}

func parseSystemItem(v gjson.Result, i int) (SystemItem, error) {
	path := index("system", i)
	it := SystemItem{Index: i, Enabled: true}
	if v.Type == gjson.String {
		it.Content = v.String()
		return it, nil
	}
	if !v.IsObject() {
		return it, errorf(ErrType, path, v.Index, "must be a string or {content, title?, position?, enabled?}, got %s", kind(v))
	}
	hasContent := false
	err := eachKey(v, path, func(key string, val gjson.Result) error {
		var err error
		switch key {
		case "content":
			hasContent = true
			it.Content, err = reqString(val, field(path, key))
		case "title":
			it.Title, err = optString(val, field(path, key))
		case "position":
			it.Bucket, err = parseBucket(val, field(path, key))
		case "enabled":
			it.Enabled, err = optBool(val, field(path, key), true)
		case "register":
			it.Register, err = parseRegister(val, field(path, key))
		case "rank":
			it.Rank, err = parseRank(val, field(path, key))
		default:
			return unknownKey(path, key, val.Index, systemItemHints)
		}
		return err
	})
	if err == nil && !hasContent {
		err = errorf(ErrMissing, path, v.Index, "missing \"content\"")
	}
	return it, err
}

var (
	systemItemHints = map[string]string{"text": "content", "prompt": "content", "label": "title", "name": "title"}
	bodyHints       = map[string]string{"text": "body", "prompt": "body"}
)

func (o *Options) parsePrimaryParts(v gjson.Result) error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return errorf(ErrType, "_system_fragments", v.Index, "must be a list, got %s", kind(v))
	}
	o.HasPrimaryParts = true
	o.PrimaryParts = []Part{}
	return eachItem(v, func(i int, item gjson.Result) error {
		p, err := parsePart(item, "_system_fragments", i, "{id?, body, ...}", nil)
		o.PrimaryParts = append(o.PrimaryParts, p)
		return err
	})
}

// profileKeys are the keys an item of context_profile.prompt_fragments may
// have. An item of _system_fragments may also place, rank and attribute
// itself.
var profileKeys = map[string]bool{
	"id": true, "source": true, "body": true, "content": true, "requires_tools": true, "requires_caps": true,
}

// parsePart reads item i of the list at list; only, when set, is the keys
// it may have, and shape describes it in the error for a non-object.
func parsePart(v gjson.Result, list string, i int, shape string, only map[string]bool) (Part, error) {
	path := index(list, i)
	p := Part{Index: i}
	if !v.IsObject() {
		return p, errorf(ErrType, path, v.Index, "must be an object %s, got %s", shape, kind(v))
	}
	var body bodyField
	err := eachKey(v, path, func(key string, val gjson.Result) error {
		if only != nil && !only[key] {
			return unknownKey(path, key, val.Index, bodyHints)
		}
		var err error
		f := field(path, key)
		switch key {
		case "id":
			p.ID, err = optString(val, f)
		case "source":
			p.Source, err = optString(val, f)
		case "producer":
			p.Producer, err = optString(val, f)
		case "bucket":
			p.Bucket, err = parseBucket(val, f)
		case "body", "content":
			err = body.set(key, val, f)
		case "requires_tools":
			p.RequiresTools, err = stringList(val, f)
		case "requires_caps":
			p.RequiresCaps, err = stringList(val, f)
		case "register":
			p.Register, err = parseRegister(val, f)
		case "rank":
			p.Rank, err = parseRank(val, f)
		default:
			return unknownKey(path, key, val.Index, bodyHints)
		}
		return err
	})
	if err != nil {
		return p, err
	}
	p.Body, err = body.get(path, v.Index)
	return p, err
}

func (o *Options) parseProfile(v gjson.Result) error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsObject() {
		return errorf(ErrType, "context_profile", v.Index, "must be an object, got %s", kind(v))
	}
	// A resolved profile carries more than these two keys (signals, a
	// language summary, ...); only these shape the prompt.
	if c := v.Get("caps"); c.Exists() {
		caps, err := parseCaps(c, "context_profile.caps")
		if err != nil {
			return err
		}
		o.ProfileCaps = caps
	}
	pf := v.Get("prompt_fragments")
	if !pf.Exists() || pf.Type == gjson.Null {
		return nil
	}
	if !pf.IsArray() {
		return errorf(ErrType, "context_profile.prompt_fragments", pf.Index, "must be a list, got %s", kind(pf))
	}
	return eachItem(pf, func(i int, item gjson.Result) error {
		p, err := parsePart(item, "context_profile.prompt_fragments", i, "{body, requires_caps?, ...}", profileKeys)
		if err == nil && !isBlank(p.Body) {
			o.Profile = append(o.Profile, p)
		}
		return err
	})
}
