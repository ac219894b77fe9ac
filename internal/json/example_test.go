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

// A document that is refused names its first fault: where it is, in bytes
// and as a JSON path, and what is wrong, the syntax in encoding/json's
// words.
func ExampleCheck() {
	fmt.Println(json.Check([]byte(`{"tools": [{"name": "a", "name": "b"}]}`), nil))
	fmt.Println(json.Check([]byte(`{"tools": [1,}`), nil))
	// Output:
	// invalid JSON at tools[0].name: key given twice (byte 25)
	// invalid JSON at tools[1]: invalid character '}' looking for beginning of value (byte 13)
}
