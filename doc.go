// Package promptloom is the heart of promptloom: every contributor to an
// LLM system prompt becomes a Fragment, and one deterministic reducer turns
// the fragments into the system string and one Row per fragment that says
// what became of it and why.
//
// A Fragment says what it is (ID), who contributed it (Source, Producer),
// where it goes (Bucket), what it needs to be included (RequiresTools,
// RequiresCaps), how much it matters when the prompt is too long (Register,
// Rank) and what it was built from (Sources). The constructors (SystemItem,
// Primary, ToolGuidance, Replacement) give the contributors a harness
// writes by hand their documented id and source, so every caller spells
// them alike; harn/options makes the rest of Harn's (its
// _system_fragments items and profile fragments) from the options.
//
// Reduce is the only way a system string is built; its doc comment is the
// ordered list of the rules it keeps, numbered as docs/rules.md numbers
// them. Options say which tools and capabilities are active and, with a
// budget.Budget, how much the prompt may count. The reduction is pure and
// deterministic: the same fragments and options always give the same bytes
// and rows. Package manifest turns a Reduction into Harn's
// context_manifest.v1, and package explain runs Harn-shaped options through
// it.
//
// The package also holds the little vocabulary every reader of input
// shares: Warning, DefaultMaxBytes and ErrTooLarge.
package promptloom
