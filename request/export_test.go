package request

// Canonical is the manifest's hand-written canonical JSON, for the test
// that holds it to the generic encoder.
func Canonical(m *Manifest) []byte { return m.appendCanonical(nil) }

// UnquotedLen is unquotedLen, for its test.
func UnquotedLen(tok string) int { return unquotedLen(tok) }
