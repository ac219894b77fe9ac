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

// JSON is what a content hash is taken over: credential-like members
// replaced whole, secrets in other strings redacted, keys sorted, numbers
// exact.
func ExampleJSON() {
	out, _ := redact.JSON([]byte(`{"x-api-key": "k-123", "note": "password: hunter22", "n": 9007199254740993}`))
	fmt.Println(string(out))
	// Output:
	// {"n":9007199254740993,"note":"<redacted:sensitive_assignment:18>","x-api-key":"[redacted]"}
}
