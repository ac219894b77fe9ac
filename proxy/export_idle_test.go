package proxy

import "time"

// Sweep closes the sessions idle at now, as the sweeper does on its tick,
// for a test that moves the clock rather than waiting.
func Sweep(p *Proxy, now time.Time) error { return p.sweep(now) }
