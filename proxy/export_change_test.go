package proxy

// Changes are the changes the proxy made to the bodies of the calls the
// page keeps, in call order: the digest of the body as received, and the
// change in words; empty for a call sent as received.
func Changes(p *Proxy) [][2]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([][2]string, len(p.calls))
	for i, cs := range p.calls {
		if cs.change != nil {
			out[i] = [2]string{cs.change.received.String(), cs.change.what}
		}
	}
	return out
}
