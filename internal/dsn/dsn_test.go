package dsn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://alice:s3cret@db/x":                            "postgres://alice:xxxxx@db/x",
		"postgresql://alice:s3:cret@db:5432,db2:5433/x":           "postgresql://alice:xxxxx@db:5432,db2:5433/x",
		"postgres://db/x?password=s3cret&a=b":                     "postgres://db/x?password=xxxxx&a=b",
		"postgres://db/x?sslpassword=s3cret&sslmode=require":      "postgres://db/x?sslpassword=xxxxx&sslmode=require",
		"postgres://db/x?pass%77ord=s3cret":                       "postgres://db/x?pass%77ord=xxxxx",
		"postgres://db/x?a=b&password=s3cret;x&c=d":               "postgres://db/x?a=b&password=xxxxx&c=d",
		"postgres://[::1]:5432/x?PASSWORD=s3cret":                 "postgres://[::1]:5432/x?PASSWORD=xxxxx",
		"postgres://db.example/log":                               "postgres://db.example/log",
		"postgres://alice:s3cret@db:port/x":                       "postgres://alice:xxxxx@db:port/x",
		"postgres://alice:s3/cret@db/x":                           unparsed,
		"postgres://db/x?password=s3=cret":                        unparsed,
		"postgres://db/x?password":                                unparsed,
		"host=db user=alice password=s3cret dbname=x":             "host=db user=alice password=xxxxx dbname=x",
		"host=db password = 's3 cret' sslpassword=s3cret2":        "host=db password = xxxxx sslpassword=xxxxx",
		`host=db password='s3\' cret' port=5432`:                  "host=db password=xxxxx port=5432",
		`password=s3\ cret host=db`:                               "password=xxxxx host=db",
		"host=db password='s3cret":                                unparsed,
		"host=db s3cret":                                          unparsed,
		"POSTGRES://alice:s3cret@db/x?sslmode=disable":            unparsed,
		"postgres:/alice:s3cret@db/x?a=b":                         unparsed,
		"options='-c x=y' application_name=a.b-c password=s3cret": "options='-c x=y' application_name=a.b-c password=xxxxx",
		"": "",
	} {
		if got := Redacted(in); got != want {
			t.Errorf("Redacted(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(Redacted(in), "s3") {
			t.Errorf("Redacted(%q) shows a secret", in)
		}
	}
}

// Error masks every secret of the string in a driver's message, as
// written and as read, and keeps the chain.
func TestError(t *testing.T) {
	for s, msg := range map[string]string{
		"postgres://alice:p%40ss@db/x?sslpassword=k%20y": "cannot parse `postgres://alice:p%40ss@db/x`: password p@ss, key k y",
		`host=db password='a\'b'`:                        `failed for a'b in password='a\'b'`,
	} {
		err := Error(s, fmt.Errorf("%s: %w", msg, context.Canceled))
		if strings.Contains(err.Error(), "ss") && !strings.Contains(err.Error(), "xxxxx") || strings.Contains(err.Error(), "p@ss") ||
			strings.Contains(err.Error(), "k y") || strings.Contains(err.Error(), "a'b") || strings.Contains(err.Error(), `a\'b`) {
			t.Errorf("Error(%q) = %q", s, err)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Error(%q) lost its chain", s)
		}
	}
	if err := Error("postgres://a:s3/cret@h/", errors.New("bad port s3cret")); strings.Contains(err.Error(), "s3cret") {
		t.Errorf("an unparsed string's error: %q", err)
	}
	if Error("x", nil) != nil {
		t.Error("Error of nil")
	}
}

func ExampleRedacted() {
	fmt.Println(Redacted("postgres://loom:s3cret@db.internal/runs?search_path=loom&sslpassword=k3y"))
	fmt.Println(Redacted("host=db.internal user=loom password='s3 cret'"))
	// Output:
	// postgres://loom:xxxxx@db.internal/runs?search_path=loom&sslpassword=xxxxx
	// host=db.internal user=loom password=xxxxx
}
