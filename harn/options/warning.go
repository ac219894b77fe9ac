package options

import "fmt"

// Warning is input Harn accepts that is likely a mistake: a value Harn
// ignores (a non-list _system_fragments, a tool without a name), a key it
// does not read, a non-string value it shows as text. Parse records them
// and goes on; `promptloom explain --lint` prints them.
type Warning struct {
	// Path is the JSON path of the value, e.g. tools[1].guidance.
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String returns the warning as one line: "options: PATH: MESSAGE".
func (w Warning) String() string { return "options: " + w.Path + ": " + w.Message }

func (o *Options) warn(path, format string, args ...any) {
	o.Warnings = append(o.Warnings, Warning{Path: path, Message: fmt.Sprintf(format, args...)})
}
