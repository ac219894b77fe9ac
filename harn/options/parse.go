package options

import (
	"encoding/json"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/promptloom/promptloom"
	pjson "github.com/promptloom/promptloom/internal/json"

	"github.com/tidwall/gjson"
)

// ParseOptions configure Parse. The zero value (or nil) reads a copy of the
// input, up to promptloom.DefaultMaxBytes.
type ParseOptions struct {
	// MaxBytes is the largest input Parse accepts; 0 (or less) is
	// promptloom.DefaultMaxBytes. Larger input is an *Error matching
	// promptloom.ErrTooLarge.
	MaxBytes int
	// InPlace lets Parse read data where it lies instead of copying it
	// first: the strings of the returned Options (and of the rows and
	// prompt pieces built from them) share data's bytes, so the caller must
	// never change data afterwards. It is for a caller that reads the
	// options into a buffer of its own and drops it, as the CLI does: a
	// large input is then held in memory once, not twice.
	InPlace bool
	// Files is the directory the options file is in, for promptloom's
	// templated fragments: a template_file, a bindings file and a
	// template's includes are read from it (an os.Root's FS keeps symbolic
	// links from leading out of it). Nil: an inline template that includes
	// nothing still renders; anything that needs a file is an error.
	Files fs.FS
	// Bindings, a JSON object, are bindings of the call: every templated
	// item renders with them, each member in place of the item's own of
	// that name, so options can stay the same from call to call while a
	// harness binds the working directory or the date. Nil: none.
	Bindings []byte
}

// Parse reads Harn-shaped options. Input over the size limit, invalid UTF-8,
// malformed JSON, a key given twice anywhere and a number past float range
// are refused before anything is read, with the limit, the offset or the
// path in the error. Then the options are read as Harn reads them: what
// Harn refuses is an error naming its JSON path, what Harn accepts is
// accepted (a value it reads as text is shown as Harn shows it), and what
// Harn accepts but is likely a mistake is recorded in Options.Warnings.
func Parse(data []byte, po *ParseOptions) (*Options, error) {
	var cfg ParseOptions
	if po != nil {
		cfg = *po
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = promptloom.DefaultMaxBytes
	}
	if len(data) > cfg.MaxBytes {
		return nil, errorf(promptloom.ErrTooLarge, "", -1, "input is %d bytes, over the limit of %d", len(data), cfg.MaxBytes)
	}
	// One copy of the input, which gjson reads without copying again; one
	// pass over it checks everything checked before reading, and finds
	// where each member of the root lies.
	var text string
	if cfg.InPlace {
		text = unsafe.String(unsafe.SliceData(data), len(data))
	} else {
		text = string(data)
	}
	doc, err := pjson.Scan(text, readOptions)
	if err != nil {
		return nil, malformed(text, err)
	}
	root := gjson.Parse(text)
	if !root.IsObject() {
		return nil, errorf(ErrInvalid, "", 0, "must be a JSON object, got %s", kind(root))
	}
	r := &reader{doc: doc, o: &Options{}, files: cfg.Files, maxBytes: cfg.MaxBytes, workLeft: cfg.MaxBytes}
	if len(cfg.Bindings) > 0 {
		if r.over, err = callBindings(cfg.Bindings, cfg.MaxBytes); err != nil {
			return nil, err
		}
	}
	// Scan found the root's members and where each ends: they are read
	// from there, not found again.
	top := object{keys: make([]string, len(doc.Members)), vals: make([]gjson.Result, len(doc.Members))}
	var system *pjson.Member
	for i := range doc.Members {
		m := &doc.Members[i]
		top.keys[i], top.vals[i] = m.Key, r.readValue(text[m.Start:m.End], m.Start)
		if m.Key == "system" {
			system = m
		}
	}
	top.sort()
	// Harn checks every key before reading any (validate.rs), in key order.
	for _, k := range top.keys {
		if fix, ok := removedOptions[k]; ok {
			v, _ := top.get(k)
			return nil, errorf(ErrInvalid, k, v.Index, "option was removed — %s", fix)
		}
	}
	r.warnTop(top)
	get := func(k string) gjson.Result { v, _ := top.get(k); return v }
	o := r.o
	// The order Harn assembles in (system_prompt.rs): the call role, the
	// replacement root, the system list, the decomposed primary block.
	if err := o.parseCallRole(get("call_role"), get("mock_scope")); err != nil {
		return nil, err
	}
	if err := r.parseSystem(get("system"), text, system); err != nil {
		return nil, err
	}
	// A replacement root is the whole prompt: Harn's assemble_system_prompt
	// returns it before it reads _system_fragments (or the profile's
	// fragments, parseProfile), so nothing in them is an error beside it.
	if r.replacement != nil {
		r.suppressed(get("_system_fragments"), "_system_fragments")
	} else if err := r.parsePrimaryParts(get("_system_fragments")); err != nil {
		return nil, err
	}
	if err := r.parseProfile(get("context_profile")); err != nil {
		return nil, err
	}
	r.parseTools(get("tools"))
	o.Capabilities = append(r.collectCaps(get("capabilities"), "capabilities"), r.profileCaps...)
	if err := r.parseReminders(get("reminders")); err != nil {
		return nil, err
	}
	if v := get("actor_chain"); v.Exists() && v.Type != gjson.Null {
		// It is copied into the manifest, whose content hash is taken over a
		// canonical encoding: it must have one. (The message names canon,
		// the package that said so once.)
		if err := pjson.Check([]byte(v.Raw), nil); err != nil {
			return nil, errorf(ErrInvalid, "actor_chain", v.Index, "cannot be written canonically: canon: %v", err)
		}
		o.ActorChain = json.RawMessage(v.Raw)
	}
	r.contributors()
	return o, nil
}

// reader reads one checked document into Options.
type reader struct {
	doc *pjson.Doc // what the check learned of it
	o   *Options

	// The primary block as read, before it is made fragments: the string
	// system, and _system_fragments (set when the key was present, even as
	// an empty list).
	systemText *string
	// replacement is the replacement root's content, when system is
	// {"mode":"replace","content":...}.
	replacement *string
	// profileCaps is context_profile.caps, which Options.Capabilities
	// lists after the capabilities option's.
	profileCaps []string
	primary     []part
	hasPrimary  bool
	profile     []part
	guidance    []string // each tool's, trimmed, in Tools' order

	// For templated fragments (template.go): where files are read, the
	// size limit, and what is left of it for the templates' output and
	// work, which all the options' templates share.
	files              fs.FS
	maxBytes, workLeft int
	over               gjson.Result // ParseOptions.Bindings
}

// contributors makes the fragments of each contributor as Harn builds
// them. Each list has no room to spare, so appending to one never writes
// into another's.
func (r *reader) contributors() {
	o := r.o
	if r.replacement != nil {
		o.System, o.Primary, o.Profile, o.Guidance = []promptloom.Fragment{promptloom.Replacement(*r.replacement)}, nil, nil, nil
		return
	}
	switch {
	case r.hasPrimary:
		o.Primary = make([]promptloom.Fragment, 0, len(r.primary))
		for _, p := range r.primary {
			o.Primary = append(o.Primary, p.fragment(primaryPart(p.index, p.body)))
		}
	case r.systemText != nil && !isBlank(*r.systemText):
		o.Primary = []promptloom.Fragment{promptloom.Primary(*r.systemText)}
	}
	if !r.hasPrimary && len(r.profile) > 0 {
		o.Profile = make([]promptloom.Fragment, 0, len(r.profile))
		for _, p := range r.profile {
			o.Profile = append(o.Profile, p.fragment(profilePart(p.index, p.body)))
		}
	}
	for i, t := range o.Tools {
		if g := r.guidance[i]; !isBlank(g) {
			o.Guidance = append(o.Guidance, promptloom.ToolGuidance(t.Name, g))
		}
	}
	o.System, o.Guidance = slices.Clip(o.System), slices.Clip(o.Guidance)
}

// parseCallRole reads call_role and its alias mock_scope as Harn does: each
// trimmed, blank refused, and the two equal when both are given.
func (o *Options) parseCallRole(role, scope gjson.Result) error {
	read := func(v gjson.Result, key string) (string, error) {
		if !v.Exists() || v.Type == gjson.Null {
			return "", nil
		}
		if v.Type != gjson.String {
			return "", errorf(ErrInvalid, key, v.Index, "must be a string, got %s", kind(v))
		}
		s := strings.TrimSpace(v.String())
		if s == "" {
			return "", errorf(ErrInvalid, key, v.Index, "must be a non-blank string")
		}
		return s, nil
	}
	r, err := read(role, "call_role")
	if err != nil {
		return err
	}
	s, err := read(scope, "mock_scope")
	if err != nil {
		return err
	}
	if r != "" && s != "" && r != s {
		return errorf(ErrInvalid, "mock_scope", scope.Index, "%s conflicts with call_role %s (mock_scope is its alias)", quote(s), quote(r))
	}
	if r == "" {
		r = s
	}
	o.CallRole = r
	return nil
}

// primaryPart is item index of a decomposed primary block
// (_system_fragments), with its default id and source; callers override
// them when the item names its own.
func primaryPart(index int, body string) promptloom.Fragment {
	return promptloom.Fragment{ID: "primary[" + strconv.Itoa(index) + "]", Source: "primary", Body: body}
}

// profilePart is item index of context_profile.prompt_fragments. Harn builds
// profile fragments in the before bucket, after the primary block (and
// after the before items of a system list), and before tool guidance: so
// after the system prompt's own opening, and before every after fragment.
// A profile fragment has no position key: to put it behind an unconditional
// fragment, make that fragment a before one. With _system_fragments there
// are none (the caller is taken to have forwarded them).
func profilePart(index int, body string) promptloom.Fragment {
	return promptloom.Fragment{ID: "profile[" + strconv.Itoa(index) + "]", Source: "profile", Body: body}
}
