package journal

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/chain"
	"github.com/promptloom/promptloom/transcript"

	"github.com/tidwall/gjson"
)

// Edits an auditor made to a recorded transcript that verified before the
// rules of docs/transcript.md that now catch them (each row failed as a
// test before its rule). recorded() has 12 lines: 1 journal_open,
// 2 system_prompt, 3 context_manifest, 4-5 c1, 6-7 c2, 8 system_prompt,
// 9 context_manifest, 10-11 c3, 12 journal_close. Edits of a middle line
// are rechained, as a forger would: the chain alone catches them otherwise.
func TestTamperingThatMustFail(t *testing.T) {
	orig := recorded(t)
	ls := lines(orig)
	// edit replaces old with new in line n (from 1).
	edit := func(n int, old, new string) string {
		out := append([]string{}, ls...)
		if !strings.Contains(out[n-1], old) {
			t.Fatalf("line %d lacks %q", n, old)
		}
		out[n-1] = strings.Replace(out[n-1], old, new, 1)
		return join(out)
	}
	insert := func(after int, line string) string {
		return join(append(append(append([]string{}, ls[:after]...), line+"\n"), ls[after:]...))
	}
	for _, tc := range []struct {
		name, tx, want string
	}{
		// The last line has no next prev to cover it.
		{"CRLF on the last line", strings.TrimSuffix(orig, "\n") + "\r\n", "line 12: a carriage return before the newline (CRLF line endings)"},
		{"CRLF everywhere", strings.ReplaceAll(orig, "\n", "\r\n"), "line 1: a carriage return"},
		{"a space after the last line's object", strings.TrimSuffix(orig, "\n") + " \n", "line 12: white space around the JSON object"},
		{"a tab before a line", edit(12, `{"prev"`, "\t"+`{"prev"`), "line 12: white space around"},
		{"a byte order mark", "\ufeff" + orig, "line 1: starts with a byte order mark"},
		{"calls 3.0", edit(12, `"calls":3`, `"calls":3.0`), "closes with 3.0 call(s)"},
		{"calls 3.9", edit(12, `"calls":3`, `"calls":3.9`), "closes with 3.9 call(s)"},
		{"calls 3e0", edit(12, `"calls":3`, `"calls":3e0`), "closes with 3e0 call(s)"},
		{`calls "3"`, edit(12, `"calls":3`, `"calls":"3"`), `closes with "3" call(s)`},
		{"seq 12.0", edit(12, `"seq":12,`, `"seq":12.0,`), "line 12: seq 12.0, want 12"},
		{"seq 12.5", edit(12, `"seq":12,`, `"seq":12.5,`), "line 12: seq 12.5, want 12"},
		{"at not a time", edit(12, `"at":"`, `"at":"yesterday","was":"`), `line 12: at "yesterday" is not an RFC 3339 time`},
		{"at missing", edit(12, `"at":`, `"was":`), "line 12: at null is not an RFC 3339 time"},
		{"session a number", edit(12, `"session":"s1"`, `"session":1`), "journal_close of session 1, which is not open"},
		// Rechained edits of middle lines.
		{"seq 4.9, rechained", rechain(edit(4, `"seq":4,`, `"seq":4.9,`)), "line 4: seq 4.9, want 4"},
		{"request_seq 4.5, rechained", rechain(edit(5, `"request_seq":4`, `"request_seq":4.5`)), "names request seq 4.5, which no earlier request has"},
		{`request_seq "4", rechained`, rechain(edit(5, `"request_seq":4`, `"request_seq":"4"`)), `names request seq "4"`},
		{"system_prompt_bytes 36.5, rechained", rechain(edit(4, `"system_prompt_bytes":36`, `"system_prompt_bytes":36.5`)),
			"system_prompt_bytes 36.5, but the manifest at line 3 says 36"},
		{"response moved to another session, rechained", rechain(edit(5, `"session":"s1"`, `"session":"s2"`)),
			`the response at line 5 names session "s2", but the request is in session "s1"`},
		{"request.messages renamed, rechained", rechain(edit(4, `"request":{"messages":`, `"request":{"dropped":`)),
			"request.messages is missing"},
		{"a key added to request, rechained", rechain(edit(4, `"parameters":null`, `"parameters":null,"model":"gpt-evil"`)),
			"served_context has no model_content_hash (request.model is retained)"},
		{"request not an object, rechained", rechain(edit(4, `"request":{`, `"request":0,"x":{`)), "no request object"},
		{"an orphan system_prompt, rechained", rechain(insert(11, `{"prev":"`+chain.Genesis+`","seq":12,"kind":"system_prompt","at":"2026-11-03T00:00:06Z","content":"Obey the user.","content_hash":"`+chain.Genesis+`"}`)),
			"line 12: the system_prompt's content hashes to blake3:"},
		{"system_prompt content a number, rechained", rechain(edit(2, `"content":"You are careful.\n\nAnswer in English."`, `"content":36`)),
			"line 2: the system_prompt has no content string"},
		{"an orphan context_manifest, rechained", rechain(insert(11, `{"prev":"`+chain.Genesis+`","seq":12,"kind":"context_manifest","at":"2026-11-03T00:00:06Z","content_hash":"`+chain.Genesis+`","manifest":{}}`)),
			"line 12: the context_manifest's manifest hashes to blake3:"},
		// What readers decode differently.
		{"invalid UTF-8 in a reply", rechain(edit(5, "reply to c1", "reply to c\xff")), "line 5: not UTF-8 (byte"},
		{"a lone high surrogate", rechain(edit(5, "reply to c1", `reply to \ud800c1`)), "line 5: a \\u escape of half a UTF-16 surrogate pair"},
		{"a lone low surrogate", rechain(edit(5, "reply to c1", `reply to \udc00c1`)), "line 5: a \\u escape of half"},
		{"a high surrogate then a non-surrogate", rechain(edit(5, "reply to c1", `reply to \ud800\u0041`)), "line 5: a \\u escape of half"},
		{"a NUL byte", edit(12, `"calls":3`, "\"calls\":3\x00"), "line 12: not JSON"},
		{"kind not a string", edit(12, `"kind":"journal_close"`, `"kind":["journal_close"]`), `line 12: kind ["journal_close"] is not a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if dir := os.Getenv("PROMPTLOOM_DUMP_EDITS"); dir != "" {
				os.WriteFile(filepath.Join(dir, "tamper_"+strings.NewReplacer(" ", "_", `"`, "", ",", "").Replace(tc.name)+".jsonl"), []byte(tc.tx), 0o644)
			}
			text, ok := reportText(t, tc.tx)
			if ok {
				t.Fatalf("the edit verifies:\n%s", text)
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("report lacks %q:\n%s", tc.want, text)
			}
		})
	}
}

// Escapes and surrogate pairs that are whole decode one way in every
// reader: they are no problem. An edit that keeps every value ("\u0074"
// for "t") verifies once rechained; one that changes a value (a pair, an
// escaped backslash before "u") fails only on the changed response's hash,
// never as a lone surrogate.
func TestEquivalentSpellingsVerify(t *testing.T) {
	orig := recorded(t)
	for _, tc := range []struct {
		name, old, new string
		same           bool // the edit keeps the value
	}{
		{"an escaped letter", "reply to c1", `reply \u0074o c1`, true},
		{"a whole surrogate pair", "reply to c1", `reply to \ud83d\ude00`, false},
		{"an escaped backslash before u", "reply to c1", `reply to \\ud800`, false},
	} {
		edited := rechain(strings.Replace(orig, tc.old, tc.new, 1))
		if edited == rechain(orig) {
			t.Fatalf("%s: the edit changed nothing", tc.name)
		}
		if msg := unreadable([]byte(lines(edited)[4])); msg != "" {
			t.Errorf("%s: line 5 is unreadable: %s", tc.name, msg)
		}
		rep, err := transcript.Verify(strings.NewReader(edited), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var b strings.Builder
		rep.WriteText(&b)
		switch {
		case tc.same && !rep.OK():
			t.Errorf("%s: an edit that keeps the value does not verify:\n%s", tc.name, b.String())
		case !tc.same && (rep.OK() || !strings.Contains(b.String(), "response_content_hash")):
			t.Errorf("%s: want a failure on the response's hash alone:\n%s", tc.name, b.String())
		case strings.Contains(b.String(), "surrogate"):
			t.Errorf("%s: reported as a surrogate:\n%s", tc.name, b.String())
		}
	}
}

// What the verifier cannot catch, as docs/transcript.md says: it checks
// that a transcript is whole and consistent, not who wrote it. Each of
// these verifies; each changes the head, which is how a kept head hash
// catches them.
func TestTamperingOnlyTheHeadCatches(t *testing.T) {
	orig := recorded(t)
	ls := lines(orig)
	origRep, _ := transcript.Verify(strings.NewReader(orig), nil)
	forged := filepath.Join(t.TempDir(), "forged.jsonl")
	if err := os.WriteFile(forged, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := Open(forged, &Options{Clock: clock, Session: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	record(t, j)
	j.Close()
	appended, _ := os.ReadFile(forged)
	for _, tc := range []struct{ name, tx string }{
		{"an unknown field added to the last line", join(append(append([]string{}, ls[:11]...), strings.Replace(ls[11], `"calls":3`, `"calls":3,"note":"x"`, 1)))},
		{"the last line's time changed", join(append(append([]string{}, ls[:11]...), strings.Replace(ls[11], `"at":"2026`, `"at":"2027`, 1)))},
		{"a whole session appended with a valid chain", string(appended)},
	} {
		rep, err := transcript.Verify(strings.NewReader(tc.tx), nil)
		if err != nil || !rep.OK() {
			t.Errorf("%s: does not verify (the docs say it does): %+v %v", tc.name, rep, err)
		}
		if rep.Head == origRep.Head {
			t.Errorf("%s: same head", tc.name)
		}
	}
}

// A call's outcome is taken from the line the verifier checked: a second
// response to the same request (which the verifier rejects) cannot stand in
// for it, so a report of the run (package transcript/report) shows only
// verified lines.
func TestReportShowsOnlyVerifiedLines(t *testing.T) {
	ls := lines(recorded(t))
	forged := strings.Replace(ls[4], "reply to c1", `all agreed\n\u001b[31mok   line 99: call fake`, 1)
	tx := join(append(append(append([]string{}, ls[:5]...), forged), ls[5:]...))
	rep, _ := transcript.Verify(strings.NewReader(tx), nil)
	if rep.OK() {
		t.Fatal("a second response verifies")
	}
	if rep.Calls[0].Outcome != "reply to c1" {
		t.Errorf("call c1 shows the unverified reply %q", rep.Calls[0].Outcome)
	}
}

// A Harn prompt retained shorter or longer than the manifest's
// system_prompt_bytes skips the segment check only when redaction
// placeholders account for the difference; otherwise any manifest would
// pass for it.
func TestHarnLengthDifferenceNeedsRedaction(t *testing.T) {
	for _, tc := range []struct {
		name, system string
		sent         int
		ok           bool
	}{
		{"no placeholder", "You are careful.", 999, false},
		{"a placeholder that does not add up", "Hello <redacted:openai_key:49> world", 999, false},
		{"a placeholder that adds up", "Hello <redacted:openai_key:49> world", len("Hello ") + 49 + len(" world"), true},
	} {
		var w harnWriter
		mf := harnManifest("bogus", tc.system)
		mf["system_prompt_bytes"] = tc.sent
		mf["segments"].([]obj)[0]["bytes"] = tc.sent
		w.call(1, "c1", tc.system, mf, nil, nil)
		tx := strings.Replace(w.buf.String(), fmtInt("system_prompt_bytes", len(tc.system)), fmtInt("system_prompt_bytes", tc.sent), 1)
		text, ok := reportText(t, tx)
		if ok != tc.ok {
			t.Errorf("%s: verifies %v, want %v:\n%s", tc.name, ok, tc.ok, text)
		}
		if !tc.ok && !strings.Contains(text, "redaction placeholders do not account for the difference") {
			t.Errorf("%s:\n%s", tc.name, text)
		}
	}
}

func fmtInt(key string, n int) string { return `"` + key + `":` + strconv.Itoa(n) }

// Edits of a call's payload receipt (recordedWithBody: line 4 is the
// request) that must fail, each rechained as a forger would, and where a
// hash can be recomputed, recomputed.
func TestPayloadTamperingMustFail(t *testing.T) {
	ls := lines(recordedWithBody(t))
	req := ls[3]
	sc := gjson.Get(req, "served_context")
	phash, bodyHash := sc.Get("payload_system_content_hash").Str, sc.Get("payload_content_hash").Str
	assembled := digest.Of("You are careful.\n\nAnswer in English.").String()
	// edit makes replacements in the request line, in order; rehash
	// recomputes payload_content_hash from the edited request.payload.
	edit := func(rehash bool, oldNew ...string) string {
		l := req
		for i := 0; i < len(oldNew); i += 2 {
			if !strings.Contains(l, oldNew[i]) {
				t.Fatalf("the request lacks %q", oldNew[i])
			}
			l = strings.Replace(l, oldNew[i], oldNew[i+1], 1)
		}
		if rehash {
			h, err := chain.JSONHash([]byte(gjson.Get(l, "request.payload").Raw))
			if err != nil {
				t.Fatal(err)
			}
			l = strings.Replace(l, bodyHash, h, 1)
		}
		out := append([]string{}, ls...)
		out[3] = l
		return rechain(join(out))
	}
	for _, tc := range []struct{ name, tx, want string }{
		{"the payload hash edited", edit(false, `"payload_system_content_hash":"`+phash, `"payload_system_content_hash":"`+assembled),
			"payload_system_content_hash " + assembled + " is not system_prompt_content_hash " + phash},
		{"the payload bytes edited", edit(false, `"payload_system_bytes":34`, `"payload_system_bytes":36`),
			"payload_system_bytes 36, but the manifest says 34"},
		{"the payload bytes 34.0", edit(false, `"payload_system_bytes":34`, `"payload_system_bytes":34.0`),
			"payload_system_bytes 34.0 is not a byte count"},
		{"the provider edited", edit(false, `"payload_provider":"anthropic"`, `"payload_provider":"gemini"`),
			"request.payload: gemini: no system channel"},
		{"the provider auto", edit(false, `"payload_provider":"anthropic"`, `"payload_provider":"auto"`),
			`payload_provider "auto" is not one of`},
		{"the body edited", edit(false, "Answer in English.", "Answer in French."),
			"request.payload does not hash to payload_content_hash"},
		{"the body edited, its hash recomputed", edit(true, "Answer in English.", "Answer in French!."),
			"request.payload's system channel does not hash to payload_system_content_hash"},
		{"the body's length kept, its hash recomputed", edit(true, "Answer in English.", "Answer in Englisx."),
			"request.payload's system channel does not hash to payload_system_content_hash"},
		{"the body and the whole receipt edited, not the system prompt", edit(true, "Answer in English.", "Answer in French!!",
			`"payload_system_content_hash":"`+phash, `"payload_system_content_hash":"`+digest.Of("You are careful.Answer in French!!").String()),
			"is not system_prompt_content_hash " + phash},
		{"the receipt dropped, the body kept", edit(false, `,"payload_system_content_hash":"`+phash+`","payload_system_bytes":34,"payload_provider":"anthropic"`, ``),
			"request.payload is retained but served_context has no payload_system_content_hash"},
		{"the body dropped, the receipt kept", edit(false, `,"payload":{"system":[{"text":"You are careful.","type":"text"},{"text":"Answer in English.","type":"text"}]}`, ``),
			"request.payload is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, ok := reportText(t, tc.tx)
			if ok {
				t.Fatalf("the edit verifies:\n%s", text)
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("report lacks %q:\n%s", tc.want, text)
			}
		})
	}
	// Not rechained, the chain alone catches an edit of the body.
	out := append([]string{}, ls...)
	out[3] = strings.Replace(req, "Answer in English.", "Answer in English!", 1)
	if text, _ := reportText(t, join(out)); !strings.Contains(text, "line 5: chain broken") {
		t.Errorf("an edited body without the chain recomputed:\n%s", text)
	}
}
