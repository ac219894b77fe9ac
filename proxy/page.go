package proxy

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/promptloom/promptloom/cache"
	"github.com/promptloom/promptloom/request"
)

//go:embed page.html.tmpl
var pageSource string

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"n": func(n int) string { return strconv.Itoa(n) },
}).Parse(pageSource))

// allowed says whether r may read the page: from loopback, or with the
// token.
func (p *Proxy) allowed(r *http.Request) bool {
	if p.o.UIToken != "" {
		if r.Header.Get("Authorization") == "Bearer "+p.o.UIToken || r.URL.Query().Get("token") == p.o.UIToken {
			return true
		}
	}
	return p.o.UIToken == "" && IsLoopback(r)
}

// page serves /promptloom/: the overview, a call's whole request
// explained, the calls as JSON, and the events that keep the overview
// current.
func (p *Proxy) page(w http.ResponseWriter, r *http.Request) {
	if !p.allowed(r) {
		http.Error(w, "promptloom: the page is served on loopback only, or with --ui-token", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "promptloom: the page is read-only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'")
	switch path := strings.TrimPrefix(r.URL.Path, "/promptloom"); {
	case path == "" || path == "/":
		p.overview(w)
	case path == "/events":
		p.events(w, r)
	case path == "/calls.json":
		p.callsJSON(w)
	case strings.HasPrefix(path, "/call/"):
		n, err := strconv.Atoi(strings.TrimPrefix(path, "/call/"))
		p.callPage(w, n, err)
	default:
		http.NotFound(w, r)
	}
}

// row is one call as the overview lists it.
type row struct {
	Seq       int    `json:"seq"`
	Call      string `json:"call"`
	Session   string `json:"session"`
	Model     string `json:"model"`
	Tokens    int    `json:"tokens"`
	Status    string `json:"status"`
	Predicted string `json:"predicted"`
	Reported  string `json:"reported"`
	Blame     string `json:"blame,omitempty"`
}

// rows lists every call, with its session's cache verdicts (p.mu held).
func (p *Proxy) rows() []row {
	verdicts := map[*callState]cache.Verdict{}
	for _, s := range p.order {
		for c, v := range p.verdicts(s) {
			verdicts[c] = v
		}
	}
	out := make([]row, 0, len(p.calls))
	for _, c := range p.calls {
		out = append(out, p.rowOf(c, verdicts[c]))
	}
	return out
}

func (p *Proxy) rowOf(c *callState, v cache.Verdict) row {
	r := row{Seq: c.seq, Call: c.name, Session: c.session.id, Model: c.pr.Model, Status: "in flight"}
	if m := c.manifest(); m != nil {
		r.Model, r.Tokens = m.Model, m.Tokens
	}
	switch {
	case c.done && c.err != nil:
		r.Status = "error: " + c.err.Error()
	case c.done:
		r.Status = "ok"
		if c.resp.StopReason != "" {
			r.Status += " (" + c.resp.StopReason + ")"
		}
	}
	r.Predicted = fmt.Sprintf("read %d, write %d", v.Predicted.Read, v.Predicted.Write)
	if v.Reported != nil {
		r.Reported = fmt.Sprintf("read %d, write %d", v.Reported.Read, v.Reported.Write)
	}
	var bs []string
	for _, b := range v.Blame {
		bs = append(bs, b.Kind+": "+b.Reason)
	}
	r.Blame = strings.Join(bs, "; ")
	return r
}

func (p *Proxy) overview(w http.ResponseWriter) {
	p.mu.Lock()
	rows := p.rows()
	sessions := len(p.order)
	p.mu.Unlock()
	state := "not checked"
	if p.o.Verify != nil {
		state = p.o.Verify()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = pageTmpl.ExecuteTemplate(w, "page", map[string]any{
		"Upstream": p.o.Upstream.String(), "Sessions": sessions, "Rows": rows, "Verify": state,
	})
}

func (p *Proxy) callsJSON(w http.ResponseWriter) {
	p.mu.Lock()
	rows := p.rows()
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(rows)
}

// callPage is one call's whole request explained, with its cache verdict
// and where it left the call before it in its session.
func (p *Proxy) callPage(w http.ResponseWriter, n int, err error) {
	p.mu.Lock()
	c := p.call(n)
	if err != nil || c == nil {
		p.mu.Unlock()
		http.Error(w, "promptloom: no such call (the page keeps the latest calls; the transcript has them all)", http.StatusNotFound)
		return
	}
	v := p.verdicts(c.session)[c]
	var prev *callState
	for i, x := range c.session.calls {
		if x == c && i > 0 {
			prev = c.session.calls[i-1]
		}
	}
	m := c.manifest()
	var pm *request.Manifest
	if prev != nil {
		pm = prev.manifest()
	}
	p.mu.Unlock()
	if m == nil {
		http.Error(w, "promptloom: the call's request has no manifest: "+c.mErr.Error(), http.StatusUnprocessableEntity)
		return
	}
	x := cache.Explain(m, nil, p.o.Cache, true)
	x.Verdict = &v
	if pm != nil {
		d := cache.Diverge(pm, m)
		x.Previous, x.PreviousCall = &d, prev.name
	}
	var b bytes.Buffer
	if err := x.WriteHTML(&b, c.name); err != nil {
		http.Error(w, "promptloom: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// events streams the overview's rows as they change (server-sent events:
// each a call's row, as JSON).
func (p *Proxy) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "promptloom: streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch := make(chan string, 64)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "promptloom: shutting down", http.StatusServiceUnavailable)
		return
	}
	p.watchers[ch] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.watchers, ch)
		p.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": promptloom\n\n")
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case seq, ok := <-ch:
			if !ok {
				return
			}
			n, _ := strconv.Atoi(seq)
			p.mu.Lock()
			var data []byte
			if c := p.call(n); c != nil {
				data, _ = json.Marshal(p.rowOf(c, p.verdicts(c.session)[c]))
			}
			p.mu.Unlock()
			if data == nil {
				continue
			}
			if _, err := fmt.Fprintf(w, "event: call\ndata: %s\n\n", data); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// call is call seq, if the page still keeps it (p.mu held).
func (p *Proxy) call(seq int) *callState {
	i := seq - (p.seq - len(p.calls)) - 1
	if i < 0 || i >= len(p.calls) {
		return nil
	}
	return p.calls[i]
}
