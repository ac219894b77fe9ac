package redact_test

import (
	"fmt"

	"github.com/promptloom/promptloom/harn/redact"
)

func ExampleString() {
	fmt.Println(redact.String("deploy with password: hunter22 and AKIAIOSFODNN7EXAMPLE"))
	fmt.Println(redact.String("nothing secret here"))
	// Output:
	// deploy with <redacted:sensitive_assignment:18> and <redacted:aws_access_key:20>
	// nothing secret here
}
