package cache

// ReportedPrompt is the whole prompt the provider reported for c, in
// tokens, as Summary.ReportedHitRate counts it (Anthropic's input, cache
// read and cache write; OpenAI's and Gemini's input, which holds what was
// read): 0 when c has no report. Added up with Verdict.Reported's reads
// over any set of calls (a session, a model, several transcripts), it
// gives their reported hit rate on the summary's terms.
func ReportedPrompt(c *Call) int {
	if c == nil || c.Reported == nil || c.Request == nil {
		return 0
	}
	return totalReported(c.Request.Provider, c.Reported)
}
