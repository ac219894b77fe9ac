package cache

import (
	"fmt"
	"strings"
	"time"

	"github.com/promptloom/promptloom/request"
)

// openai is OpenAI's automatic cache (docs/caching.md, "OpenAI"); from
// GPT-5.6 on, its breakpoints (openai56.go). For the models before: every request leaves its prefix cached, a later
// request with the same cache key reads the longest live prefix they
// share, from 1,024 tokens, in steps of 128 (2,048 on GPT-5.5), and no
// write is billed. Reads are estimates: OpenAI's hidden tokens and exact
// breakpoint intervals are not documented.
type openai struct{}

// gemini is Gemini's implicit cache (docs/caching.md, "Gemini"): the
// system instruction and tools are one head that must match whole; after
// it the contents match part by part; the model's minimum applies; the
// read is an upper bound ("may be read"), never a broken rule.
type gemini struct{}

var geminiMinimums = []minRow{
	{"gemini-4", 4096}, {"gemini-3.8-flash", 4096}, {"gemini-3.6-flash", 4096}, {"gemini-3.7-flash", 4096},
	{"gemini-3.5-flash", 4096}, {"gemini-3.1-pro", 4096}, {"gemini-2.5-flash", 2048}, {"gemini-2.5-pro", 2048},
}

func (openai) settings() map[string]string {
	return map[string]string{"parallel_tool_calls": "tools", "text": "tools", "response_format": "tools",
		"reasoning": "tools", "reasoning_effort": "tools", "verbosity": "tools", "context_management": "tools"}
}

func (gemini) settings() map[string]string {
	return map[string]string{"toolConfig": "tools", "tool_config": "tools"}
}

// implicitRules are what differs between the two implicit caches.
type implicitRules struct {
	min      func(m *request.Manifest, o *Options) (int, bool)
	step     func(model string) int
	lifetime func(m *request.Manifest, o *Options) time.Duration
	// entryFrom is the first position an entry can end at.
	entryFrom func(bl []block) int
	seed      func(m *request.Manifest) string
}

func (openai) rules() implicitRules {
	return implicitRules{
		min: func(*request.Manifest, *Options) (int, bool) { return 1024, true },
		step: func(model string) int {
			if strings.HasPrefix(model, "gpt-5.5") {
				return 2048
			}
			return 128
		},
		lifetime: func(m *request.Manifest, o *Options) time.Duration {
			if m.Cache.Retention == "24h" || m.Cache.Retention == "30m" {
				return 30 * time.Minute
			}
			if o.Lifetime > 0 {
				return o.Lifetime
			}
			return fiveMinutes
		},
		entryFrom: func([]block) int { return 0 },
		seed: func(m *request.Manifest) string {
			return m.Cache.Key
		},
	}
}

func (gemini) rules() implicitRules {
	return implicitRules{
		min:  func(m *request.Manifest, o *Options) (int, bool) { return minimum(m.Model, o, geminiMinimums) },
		step: func(string) int { return 1 },
		lifetime: func(_ *request.Manifest, o *Options) time.Duration {
			if o.Lifetime > 0 {
				return o.Lifetime
			}
			return fiveMinutes
		},
		entryFrom: func(bl []block) int {
			// The head (system instruction and tools) matches whole.
			for i, b := range bl {
				if b.section == "messages" {
					return max(i-1, 0)
				}
			}
			return max(len(bl)-1, 0)
		},
		seed: func(m *request.Manifest) string {
			return m.Cache.Content
		},
	}
}

func (o openai) predict(st *state, c *Call, scale float64) Verdict {
	if gpt56(c.Request) {
		return o.predict56(st, c, scale)
	}
	return implicitPredict(st, c, scale, o.settings(), o.rules(), "openai")
}

func (g gemini) predict(st *state, c *Call, scale float64) Verdict {
	return implicitPredict(st, c, scale, g.settings(), g.rules(), "gemini")
}

func implicitPredict(st *state, c *Call, scale float64, settings map[string]string, r implicitRules, name string) Verdict {
	m := c.Request
	seeded := *m
	seeded.Model = m.Model + "\x00" + name + "\x00" + r.seed(m)
	bl := blocks(&seeded, settings, scale)
	v := Verdict{Estimate: true}
	if len(bl) == 0 {
		return v
	}
	v.InputTokens = bl[len(bl)-1].cum
	min, known := r.min(m, st.opts)
	best := -1
	for p := len(bl) - 1; p >= r.entryFrom(bl); p-- {
		if e := st.entries[bl[p].key]; e != nil && e.alive(c.At) {
			best = p
			break
		}
	}
	if best >= 0 {
		e := st.entries[bl[best].key]
		e.expires = c.At.Add(e.ttl)
		step := r.step(m.Model)
		v.Predicted.Read, v.ReadThrough = bl[best].cum/step*step, bl[best].path
	}
	if known && v.InputTokens < min {
		v.Blame = append(v.Blame, Blame{Kind: "minimum", Tokens: 0,
			Reason: fmt.Sprintf("the request is about %s tokens, below %s's %s-token minimum: it is not cached", thousands(v.InputTokens), m.Model, thousands(min))})
	}
	if h, d, ok := st.best(c); ok && best < len(bl)-1 {
		hs := *h.Request
		hs.Model = h.Request.Model + "\x00" + name + "\x00" + r.seed(h.Request)
		hb := blocks(&hs, settings, 1)
		if d.Index < len(hb) && d.Index < len(m.Segments) && (!known || d.SharedTokens < hbCum(hb)) && hbCum(hb) >= min {
			v.Blame = append(v.Blame, Blame{Kind: "change", Path: d.Path, Section: d.Section, Since: h.Name,
				Tokens: max(int(float64(hbCum(hb))*scale+0.5)-v.Predicted.Read, 0),
				Reason: fmt.Sprintf("%s %s since call %s", d.Path, d.Reason, h.Name)})
		}
	}
	began := c.Began
	if began.IsZero() {
		began = c.At
	}
	ttl := r.lifetime(m, st.opts)
	for p := r.entryFrom(bl); p < len(bl); p++ {
		if known && bl[p].cum < min {
			continue
		}
		if e := st.entries[bl[p].key]; e != nil && e.alive(c.At) {
			e.expires = c.At.Add(ttl)
			continue
		}
		st.entries[bl[p].key] = &entry{call: c.Name, path: bl[p].path, pos: p, tokens: bl[p].cum, ttl: ttl,
			expires: c.At.Add(ttl), readable: began}
	}
	return v
}

func hbCum(hb []block) int {
	if len(hb) == 0 {
		return 0
	}
	return hb[len(hb)-1].cum
}

func (o openai) lint(m, since *request.Manifest, opts *Options) []Finding {
	if gpt56(m) {
		return o.lint56(m, since, opts)
	}
	return implicitLint(m, since, opts, o.rules(), "OpenAI")
}

func (g gemini) lint(m, since *request.Manifest, opts *Options) []Finding {
	fs := implicitLint(m, since, opts, g.rules(), "Gemini")
	if m.Cache.Content != "" {
		for _, s := range m.Segments {
			if s.Section == "system" || s.Section == "tools" {
				fs = append(fs, Finding{Severity: "warning", Rule: "cached-content", Path: s.Path,
					Message: "a system instruction or tools beside cachedContent: they belong in the cached content (the API is reported to refuse the request)"})
				break
			}
		}
	}
	return fs
}

func implicitLint(m, since *request.Manifest, opts *Options, r implicitRules, who string) []Finding {
	var fs []Finding
	min, known := r.min(m, orDefault(opts))
	if !known {
		fs = append(fs, Finding{Severity: "warning", Rule: "minimum", Message: fmt.Sprintf("minimum unknown: model %q is not in the table (docs/caching.md)", m.Model)})
	} else if m.Tokens < min {
		fs = append(fs, Finding{Severity: "warning", Rule: "minimum",
			Message: fmt.Sprintf("the request is about %s tokens, below %s's %s-token minimum for %s's cache", thousands(m.Tokens), m.Model, thousands(min), who)})
	}
	if since != nil {
		d := diverge(since, m)
		if d.Index < len(since.Segments) && d.Index < len(m.Segments) {
			rule := "changed"
			if strings.HasPrefix(d.Reason, "tools reordered") {
				rule = "tool-order"
			}
			fs = append(fs, Finding{Severity: "warning", Rule: rule, Path: d.Path,
				Message: fmt.Sprintf("%s: the prefix shared with the previous request ends here", d.Reason)})
		}
	}
	return fs
}
