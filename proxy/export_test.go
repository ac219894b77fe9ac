package proxy

// SetKeepCalls sets how many calls the page keeps, for a test; it returns
// a func that puts it back.
func SetKeepCalls(n int) func() {
	old := keepCalls
	keepCalls = n
	return func() { keepCalls = old }
}
