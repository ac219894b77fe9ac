package cache

import (
	"fmt"
	"slices"

	"github.com/promptloom/promptloom/internal/wire"
)

// beside sets the provider's own verdict on c (from its reported usage)
// beside promptloom's: where c leaves the call before it in its session,
// the call a proxy asks the provider to compare it with. It is called
// before c is remembered, so the session's latest call is the one before.
func (st *state) beside(c *Call, v *Verdict) {
	u := c.Reported
	if u == nil || u.CacheMissReason == "" {
		return
	}
	v.ProviderReason, v.ProviderTokens = u.CacheMissReason, u.CacheMissedTokens
	sections, settings, ok := wire.MissPlaces(u.CacheMissReason)
	prev := st.latest[conversation(c)]
	if !ok || prev == nil {
		return
	}
	// The provider compares the requests' structure whatever the cache
	// read, so the divergence is held to it, not only a change blamed for
	// a miss: a change past what was cached is still a change.
	d := diverge(prev.Request, c.Request)
	v.ProviderSince = prev.Name
	agrees := false
	switch {
	case d.Setting != "":
		v.Found = d.Reason
		agrees = slices.Contains(settings, d.Setting)
	case d.Reason == "":
		v.Found = "no change"
		agrees = len(sections) == 0 && len(settings) == 0
	default:
		v.Found = fmt.Sprintf("%s (%s): %s", d.Path, d.Section, d.Reason)
		agrees = slices.Contains(sections, d.Section)
	}
	v.Agrees = &agrees
}

// providerLine says the provider's verdict beside promptloom's, in words.
func (v Verdict) providerLine() string {
	line := "the provider says " + v.ProviderReason
	if v.ProviderTokens > 0 {
		line += fmt.Sprintf(" (about %s tokens missed, its estimate)", thousands(v.ProviderTokens))
	}
	switch {
	case v.Agrees == nil && v.ProviderSince == "":
		if _, _, ok := wire.MissPlaces(v.ProviderReason); ok {
			return line + "; no call before it in its session to hold it to"
		}
		return line + ": it concludes nothing"
	case *v.Agrees:
		return line + fmt.Sprintf("; promptloom finds, since call %s, %s: they agree", v.ProviderSince, v.Found)
	}
	return line + fmt.Sprintf("; promptloom finds, since call %s, %s: they disagree", v.ProviderSince, v.Found)
}

// tally counts the verdicts that agree and lists those that do not.
func (a *Analysis) tally() {
	for _, v := range a.Verdicts {
		switch {
		case v.Agrees == nil:
		case *v.Agrees:
			a.Summary.Agreements++
		default:
			a.Summary.Disagreements = append(a.Summary.Disagreements, fmt.Sprintf("call %s (line %d): %s", v.Call, v.Line, v.providerLine()))
		}
	}
}
