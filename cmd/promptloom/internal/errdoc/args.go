package errdoc

import "strings"

// Args splits a command line as the catalogue's cases and the README's
// tour write them: at white space, except inside single quotes, which hold
// their text as it is (an argument with spaces; two quotes, an empty one), as
// a POSIX shell reads them. There are no escapes: a quote cannot be quoted.
func Args(line string) []string {
	var args []string
	var cur strings.Builder
	in, quoted := false, false // in an argument; inside quotes
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case !quoted && (r == ' ' || r == '\t'):
			if in {
				args = append(args, cur.String())
				cur.Reset()
			}
			in = false
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		args = append(args, cur.String())
	}
	return args
}
