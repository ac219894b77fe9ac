package canon_test

import (
	"fmt"

	canon "github.com/promptloom/promptloom/internal/json"
)

func ExampleEncode() {
	out, _ := canon.Encode([]byte(`{ "b": [1.0, 9007199254740993, "x<y\/"], "a": null }`))
	fmt.Println(string(out))
	// Output: {"a":null,"b":[1.0,9007199254740993,"x<y/"]}
}
