package fragment_test

import (
	"fmt"

	"github.com/promptloom/promptloom/fragment"
)

func ExampleSystemItem() {
	f := fragment.SystemItem(2, " Style ", "  Answer briefly. ", fragment.After)
	fmt.Printf("%s %s %q\n", f.ID, f.Bucket, f.Body)
	g := fragment.ToolGuidance("todo", "Keep the list current.")
	fmt.Println(g.ID, g.Source, g.RequiresTools, g.Register)
	// Output:
	// system[2] after "## Style\nAnswer briefly."
	// tool:todo.guidance tool:todo [todo] binding
}
