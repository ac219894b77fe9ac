package json_test

import (
	"fmt"

	"github.com/promptloom/promptloom/internal/json"
)

func ExampleEncode() {
	out, _ := json.Encode([]byte(`{ "b": [1.0, 9007199254740993, "x<y\/"], "a": null }`))
	fmt.Println(string(out))
	// Output: {"a":null,"b":[1.0,9007199254740993,"x<y/"]}
}
