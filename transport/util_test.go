package transport_test

import (
	"github.com/promptloom/promptloom/digest"
	"github.com/promptloom/promptloom/harn/redact"
)

func digestOfJSON(s string) digest.Digest {
	b, err := redact.JSON([]byte(s))
	if err != nil {
		panic(err)
	}
	return digest.Bytes(b)
}
