package digest_test

import (
	"fmt"

	"github.com/promptloom/promptloom/digest"
)

func ExampleOf() {
	// A secret never reaches the hash: Of digests the redacted text.
	a := digest.Of("token: s3cr3t-value")
	b := digest.String("<redacted:sensitive_assignment:19>")
	fmt.Println(a == b)
	fmt.Println(digest.Of("base"))
	// Output:
	// true
	// blake3:de8f3fcf327eb911b2c368e011e0ffdee22fed456b4f4508337018ba46a0639d
}
