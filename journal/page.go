package journal

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
)

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("run").Parse(pageTemplate))

type roleLane struct {
	Name  string
	Calls []*RunCall
}

// WriteHTML renders the run as one self-contained HTML page: a lane of
// calls per role, in the order of their first call; each call's fragments
// (included, excluded, shed, with reasons and sources), its verdict and
// reply; and, against the role's previous call, the fragments that changed
// and the bytes a prefix cache still serves.
func (run *Run) WriteHTML(w io.Writer) error {
	var lanes []*roleLane
	byRole := map[string]*roleLane{}
	for _, c := range run.Calls {
		l := byRole[c.Role]
		if l == nil {
			l = &roleLane{Name: c.Role}
			byRole[c.Role] = l
			lanes = append(lanes, l)
		}
		l.Calls = append(l.Calls, c)
	}
	v, i, f := run.Report.Counts()
	return page.Execute(w, map[string]any{
		"Title":    "promptloom run: " + run.Source,
		"Summary":  fmt.Sprintf("%d call(s) verified, %d incomplete, %d failed (%s transcript, %d lines)", v, i, f, run.Report.Format, run.Report.Lines),
		"Head":     run.Report.Head,
		"Problems": run.Report.Problems,
		"Roles":    lanes,
	})
}
