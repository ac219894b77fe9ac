package url_test

import (
	"fmt"

	"github.com/promptloom/promptloom/internal/redact/internal/url"
)

// A URL (http or https, as Harn finds them) comes back as the url crate
// writes it: the host lower-cased, the default port dropped, dot segments
// resolved.
func ExampleParse() {
	u, ok := url.Parse("https://user:pw@Example.COM:443/a/./b/../c?q=a+b%7e")
	fmt.Println(ok, u.Userinfo, u)
	fmt.Println(url.ParseForm(u.Query))
	fmt.Println(url.SerializeForm([][2]string{{"q", "a b~"}, {"token", "[redacted]"}}))
	// Output:
	// true true https://example.com/a/c?q=a+b%7e
	// [[q a b~]]
	// q=a+b%7E&token=%5Bredacted%5D
}
