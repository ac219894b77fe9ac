package promptloom_test

import (
	"fmt"

	"github.com/promptloom/promptloom"
)

func ExampleSystemItem() {
	f := promptloom.SystemItem(2, " Style ", "  Answer briefly. ", promptloom.After)
	fmt.Printf("%s %s %q\n", f.ID, f.Bucket, f.Body)
	g := promptloom.ToolGuidance("todo", "Keep the list current.")
	fmt.Println(g.ID, g.Source, g.RequiresTools, g.Register)
	// Output:
	// system[2] after "## Style\nAnswer briefly."
	// tool:todo.guidance tool:todo [todo] binding
}
