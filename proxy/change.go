package proxy

import (
	"net/http"
	"strings"

	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/internal/wire"
	"github.com/promptloom/promptloom/payload"
)

// change is what the proxy changed in a request before sending it, on
// its own options (Diagnostics, AutoCache): the body as received, by its
// digest, and the change in words. The body sent is the transcript's.
type change struct {
	received digest.Digest // of the body's bytes as the client sent them
	what     string
}

// rewrite makes the body call cs sends (cs.pr, read; the body as
// received when nothing is to change) and says what changed (cs.change),
// adding to h the header the change needs. It runs outside p.mu but for
// reading the session's latest response id; s is cs's session, and cs is
// not shared yet.
func (p *Proxy) rewrite(s *session, cs *callState, h http.Header) {
	pr := cs.pr
	var what []string
	var header [2]string // a header the change needs, and its value
	if p.o.AutoCache {
		if body, at := wire.PlaceBreakpoints(pr); len(at) > 0 {
			next, err := payload.Read(body, pr.Provider)
			if err != nil {
				p.log.Warn("promptloom proxy: the body with cache breakpoints placed does not read; sent as received", "err", err)
				return
			}
			pr = next
			what = append(what, "placed cache breakpoints (--cache auto) at "+strings.Join(at, ", "))
		}
	}
	if p.o.Diagnostics {
		p.mu.Lock()
		previous := s.last
		p.mu.Unlock()
		if body, key, value, added := wire.AskDiagnostics(pr, previous); added {
			next, err := payload.Read(body, pr.Provider)
			if err != nil {
				p.log.Warn("promptloom proxy: the body asking for cache diagnostics does not read; sent without asking", "err", err)
			} else {
				pr = next
				w := "asked for the provider's cache diagnostics (--diagnostics) against response " + previous
				if previous == "" {
					w = "asked for the provider's cache diagnostics (--diagnostics), naming no previous response: the session's first call"
				}
				if key != "" {
					header = [2]string{key, value}
					w += ", with " + key + ": " + value
				}
				what = append(what, w)
			}
		}
	}
	if len(what) == 0 {
		return
	}
	if n := len(wire.Body(pr)); n > p.o.MaxBodyBytes {
		// The limit is the client's body's: one that came within it is
		// not refused for what the proxy would add.
		p.log.Warn("promptloom proxy: the body changed would be over --max-bytes; sent as received", "bytes", n, "limit", p.o.MaxBodyBytes)
		return
	}
	if header[0] != "" {
		joinHeader(h, header[0], header[1])
	}
	cs.change = &change{received: digest.Bytes(wire.Body(cs.pr)), what: strings.Join(what, "; ")}
	cs.pr = pr
}

// joinHeader adds value to the comma-separated list in h's key (all its
// lines joined into one), unless the list has it already.
func joinHeader(h http.Header, key, value string) {
	var list []string
	for _, v := range h.Values(key) {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
	}
	for _, item := range list {
		if strings.EqualFold(item, value) {
			return
		}
	}
	h.Set(key, strings.Join(append(list, value), ","))
}
