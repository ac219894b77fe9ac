package options

import (
	"github.com/promptloom/promptloom/harn/reminder"

	"github.com/tidwall/gjson"
)

// The reminders option, promptloom's own: directives injected in order and
// rendered outside the system string (harn/reminder).

func (r *reader) parseReminders(v gjson.Result) error {
	if v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return errorf(ErrInvalid, "reminders", v.Index, "must be a list, got %s", kind(v))
	}
	return r.eachItem(v, func(i int, item gjson.Result) error {
		rem, err := r.parseReminder(item, i)
		r.o.Reminders = append(r.o.Reminders, rem)
		return err
	})
}

func (r *reader) parseReminder(v gjson.Result, i int) (reminder.Reminder, error) {
	path := index("reminders", i)
	var rem reminder.Reminder
	if !v.IsObject() {
		return rem, errorf(ErrInvalid, path, v.Index, "must be an object {body, ...}, got %s", kind(v))
	}
	hasBody := false
	err := r.eachKey(v, func(key string, val gjson.Result) error {
		var err error
		f := field(path, key)
		switch key {
		case "body":
			hasBody = true
			rem.Body, err = reqString(val, f)
		case "tags":
			rem.Tags, err = r.stringList(val, f)
		case "dedupe_key":
			rem.DedupeKey, err = optString(val, f)
		case "ttl_turns":
			rem.TTLTurns, err = parseInt(val, is(f), "ttl_turns")
			if err == nil && rem.TTLTurns < 0 {
				err = errorf(ErrInvalid, f, val.Index, "must not be negative, got %d", rem.TTLTurns)
			}
		case "preserve_on_compact":
			rem.PreserveOnCompact, err = optBool(val, f, false)
		case "authority":
			rem.Authority, err = optString(val, f)
			switch rem.Authority {
			case "", "contract", "corrective", "advisory": // Harn's DirectiveAuthority
			default:
				if err == nil {
					err = errorf(ErrInvalid, f, val.Index, "must be contract, corrective or advisory, got %s", quote(rem.Authority))
				}
			}
		default:
			return unknownKey(path, key, val.Index, bodyHints)
		}
		return err
	})
	if err == nil && (!hasBody || isBlank(rem.Body)) {
		err = errorf(ErrInvalid, path, v.Index, "a reminder needs a non-blank \"body\"")
	}
	return rem, err
}
