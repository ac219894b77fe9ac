package options

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode"

	"github.com/promptloom/promptloom/fragment"
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
		i := 0
		var err error
		v.ForEach(func(_, item gjson.Result) bool {
			var it SystemItem
			it, err = parseSystemItem(item, i)
			o.SystemItems = append(o.SystemItems, it)
			i++
			return err == nil
		})
		return err
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
	o.PrimaryParts = []PrimaryPart{}
	i := 0
	var err error
	v.ForEach(func(_, item gjson.Result) bool {
		var p PrimaryPart
		p, err = parsePrimaryPart(item, i)
		o.PrimaryParts = append(o.PrimaryParts, p)
		i++
		return err == nil
	})
	return err
}

func parsePrimaryPart(v gjson.Result, i int) (PrimaryPart, error) {
	path := index("_system_fragments", i)
	p := PrimaryPart{Index: i}
	if !v.IsObject() {
		return p, errorf(ErrType, path, v.Index, "must be an object {id?, body, ...}, got %s", kind(v))
	}
	var body bodyField
	err := eachKey(v, path, func(key string, val gjson.Result) error {
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
	i := 0
	var err error
	pf.ForEach(func(_, item gjson.Result) bool {
		var p ProfilePart
		p, err = parseProfilePart(item, i)
		if err == nil && !isBlank(p.Body) {
			o.Profile = append(o.Profile, p)
		}
		i++
		return err == nil
	})
	return err
}

func parseProfilePart(v gjson.Result, i int) (ProfilePart, error) {
	path := index("context_profile.prompt_fragments", i)
	p := ProfilePart{Index: i}
	if !v.IsObject() {
		return p, errorf(ErrType, path, v.Index, "must be an object {body, requires_caps?, ...}, got %s", kind(v))
	}
	var body bodyField
	err := eachKey(v, path, func(key string, val gjson.Result) error {
		var err error
		f := field(path, key)
		switch key {
		case "id":
			p.ID, err = optString(val, f)
		case "source":
			p.Source, err = optString(val, f)
		case "body", "content":
			err = body.set(key, val, f)
		case "requires_tools":
			p.RequiresTools, err = stringList(val, f)
		case "requires_caps":
			p.RequiresCaps, err = stringList(val, f)
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

func (o *Options) parseReminders(v gjson.Result) error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return errorf(ErrType, "reminders", v.Index, "must be a list, got %s", kind(v))
	}
	i := 0
	var err error
	v.ForEach(func(_, item gjson.Result) bool {
		var r Reminder
		r, err = parseReminder(item, i)
		o.Reminders = append(o.Reminders, r)
		i++
		return err == nil
	})
	return err
}

func parseReminder(v gjson.Result, i int) (Reminder, error) {
	path := index("reminders", i)
	r := Reminder{Index: i}
	if !v.IsObject() {
		return r, errorf(ErrType, path, v.Index, "must be an object {body, ...}, got %s", kind(v))
	}
	hasBody := false
	err := eachKey(v, path, func(key string, val gjson.Result) error {
		var err error
		f := field(path, key)
		switch key {
		case "body":
			hasBody = true
			r.Body, err = reqString(val, f)
		case "tags":
			r.Tags, err = stringList(val, f)
		case "dedupe_key":
			r.DedupeKey, err = optString(val, f)
		case "ttl_turns":
			r.TTLTurns, err = parseRank(val, f)
			if err == nil && r.TTLTurns < 0 {
				err = errorf(ErrValue, f, val.Index, "must not be negative, got %d", r.TTLTurns)
			}
		case "preserve_on_compact":
			r.PreserveOnCompact, err = optBool(val, f, false)
		case "authority":
			r.Authority, err = optString(val, f)
			if err == nil && r.Authority != "" && r.Authority != "contract" && r.Authority != "corrective" && r.Authority != "advisory" {
				err = errorf(ErrValue, f, val.Index, "must be contract, corrective or advisory, got %q", r.Authority)
			}
		default:
			return unknownKey(path, key, val.Index, bodyHints)
		}
		return err
	})
	if err == nil && (!hasBody || isBlank(r.Body)) {
		err = errorf(ErrMissing, path, v.Index, "a reminder needs a non-blank \"body\"")
	}
	return r, err
}

func (o *Options) parseTools(v gjson.Result) error {
	list := v
	path := "tools"
	if v.IsObject() {
		list, path = v.Get("tools"), "tools.tools"
		if !list.Exists() {
			return errorf(ErrMissing, "tools", v.Index, "an object must hold the list under \"tools\"")
		}
	}
	if list.Type == gjson.Null {
		return nil
	}
	if !list.IsArray() {
		return errorf(ErrType, path, list.Index, "must be a list of tools or {\"tools\": [...]}, got %s", kind(list))
	}
	seen := map[string]bool{}
	i := 0
	var err error
	list.ForEach(func(_, item gjson.Result) bool {
		var t Tool
		t, err = parseTool(item, index(path, i))
		if err == nil && seen[t.Name] {
			err = errorf(ErrValue, field(index(path, i), "name"), item.Get("name").Index, "duplicate tool %q", t.Name)
		}
		seen[t.Name] = true
		o.Tools = append(o.Tools, t)
		i++
		return err == nil
	})
	return err
}

// parseTool reads the keys of a tool that matter to the prompt. Tool
// definitions carry provider-specific keys (parameters, input_schema,
// strict, ...), which are left alone.
func parseTool(v gjson.Result, path string) (Tool, error) {
	t := Tool{Active: true}
	if !v.IsObject() {
		return t, errorf(ErrType, path, v.Index, "must be an object {name, description?, parameters?, guidance?}, got %s", kind(v))
	}
	name := v.Get("name")
	if !name.Exists() {
		return t, errorf(ErrMissing, path, v.Index, "missing \"name\"")
	}
	var err error
	if t.Name, err = reqString(name, field(path, "name")); err != nil {
		return t, err
	}
	if t.Name == "" {
		return t, errorf(ErrValue, field(path, "name"), name.Index, "must not be empty")
	}
	if t.Guidance, err = optString(v.Get("guidance"), field(path, "guidance")); err != nil {
		return t, err
	}
	if _, err = optString(v.Get("description"), field(path, "description")); err != nil {
		return t, err
	}
	t.Active, err = optBool(v.Get("active"), field(path, "active"), true)
	return t, err
}

// parseCaps reads a capability list, or an object whose keys count when
// their value is neither false nor null.
func parseCaps(v gjson.Result, path string) ([]string, error) {
	switch {
	case v.Type == gjson.Null:
		return nil, nil
	case v.IsArray():
		return stringList(v, path)
	case v.IsObject():
		var out []string
		err := eachKey(v, path, func(key string, val gjson.Result) error {
			if val.Type != gjson.Null && val.Type != gjson.False {
				out = append(out, key)
			}
			return nil
		})
		return out, err
	}
	return nil, errorf(ErrType, path, v.Index, "must be a list of names or an object of flags, got %s", kind(v))
}

// bodyField reads a body given as "body" or "content", but not both.
type bodyField struct {
	key string
	val gjson.Result
}

func (b *bodyField) set(key string, val gjson.Result, path string) error {
	if b.key != "" {
		return errorf(ErrConflict, path, val.Index, "give either \"body\" or \"content\", not both")
	}
	b.key, b.val = key, val
	return nil
}

func (b *bodyField) get(path string, offset int) (string, error) {
	if b.key == "" {
		return "", errorf(ErrMissing, path, offset, "missing \"body\"")
	}
	return reqString(b.val, field(path, b.key))
}

// eachKey calls fn for each key of the object v, in order, and rejects a key
// given twice (JSON parsers disagree on which one wins).
func eachKey(v gjson.Result, path string, fn func(key string, val gjson.Result) error) error {
	var seen []string
	var err error
	v.ForEach(func(k, val gjson.Result) bool {
		key := k.String()
		for _, s := range seen {
			if s == key {
				err = errorf(ErrDuplicateKey, field(path, key), k.Index, "key given twice")
				return false
			}
		}
		seen = append(seen, key)
		err = fn(key, val)
		return err == nil
	})
	return err
}

func reqString(v gjson.Result, path string) (string, error) {
	if v.Type != gjson.String {
		return "", errorf(ErrType, path, v.Index, "must be a string, got %s", kind(v))
	}
	return v.String(), nil
}

func optString(v gjson.Result, path string) (string, error) {
	if !v.Exists() || v.Type == gjson.Null {
		return "", nil
	}
	return reqString(v, path)
}

func optBool(v gjson.Result, path string, def bool) (bool, error) {
	switch {
	case !v.Exists():
		return def, nil
	case v.Type == gjson.True:
		return true, nil
	case v.Type == gjson.False:
		return false, nil
	}
	return def, errorf(ErrType, path, v.Index, "must be true or false, got %s", kind(v))
}

func stringList(v gjson.Result, path string) ([]string, error) {
	if v.Type == gjson.Null {
		return nil, nil
	}
	if !v.IsArray() {
		return nil, errorf(ErrType, path, v.Index, "must be a list of strings, got %s", kind(v))
	}
	var out []string
	var err error
	i := 0
	v.ForEach(func(_, item gjson.Result) bool {
		if item.Type != gjson.String {
			err = errorf(ErrType, index(path, i), item.Index, "must be a string, got %s", kind(item))
			return false
		}
		if s := item.String(); s != "" {
			out = append(out, s)
		}
		i++
		return true
	})
	return out, err
}

func parseBucket(v gjson.Result, path string) (fragment.Bucket, error) {
	if !v.Exists() || v.Type == gjson.Null {
		return fragment.Before, nil
	}
	if v.Type == gjson.String {
		if b, ok := fragment.ParseBucket(v.String()); ok {
			return b, nil
		}
	}
	return fragment.Before, errorf(ErrValue, path, v.Index, "must be \"before\" or \"after\", got %s", v.Raw)
}

func parseRegister(v gjson.Result, path string) (fragment.Register, error) {
	if v.Type == gjson.Null {
		return fragment.Binding, nil
	}
	if v.Type != gjson.String {
		return fragment.Binding, errorf(ErrType, path, v.Index, "must be a string, got %s", kind(v))
	}
	r, err := fragment.ParseRegister(v.String())
	if err != nil {
		return r, errorf(ErrValue, path, v.Index, "%v", err)
	}
	return r, nil
}

func parseRank(v gjson.Result, path string) (int, error) {
	if v.Type == gjson.Null {
		return 0, nil
	}
	if v.Type != gjson.Number || strings.ContainsAny(v.Raw, ".eE") || v.Num != float64(int(v.Int())) {
		return 0, errorf(ErrType, path, v.Index, "must be an integer, got %s", v.Raw)
	}
	return int(v.Int()), nil
}

func kind(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "nothing"
	case v.IsArray():
		return "a list"
	case v.IsObject():
		return "an object"
	}
	switch v.Type {
	case gjson.String:
		return "a string"
	case gjson.Number:
		return "a number (" + v.Raw + ")"
	case gjson.True, gjson.False:
		return "a boolean (" + v.Raw + ")"
	case gjson.Null:
		return "null"
	}
	return v.Type.String()
}

func isBlank(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) }) < 0
}

// checkSyntax rejects malformed JSON with the offset encoding/json reports
// (gjson reads what it can and would not say where the input went wrong).
func checkSyntax(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil {
		if _, err := dec.Token(); err != io.EOF {
			return errorf(ErrSyntax, "", int(dec.InputOffset()), "malformed JSON: data after the top-level value")
		}
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return errorf(ErrSyntax, "", int(se.Offset), "malformed JSON: %s", se.Error())
	}
	return errorf(ErrSyntax, "", len(data), "malformed JSON: %s", err.Error())
}
