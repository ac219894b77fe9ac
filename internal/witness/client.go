package witness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// Cosign asks the witness at url (its submission prefix) to cosign
// checkpoint, which extends the tree of size old by proof, and returns the
// witness's signature lines. The lines are not checked here: the caller
// appends them to the checkpoint and opens it with the witnesses' verifiers
// (NewVerifier) it trusts. A refusal is an *Error; a 409 carries in Size the
// size the witness last cosigned, to retry from. client nil is
// http.DefaultClient.
func Cosign(ctx context.Context, client *http.Client, url string, old int64, proof tlog.TreeProof, checkpoint []byte) ([]byte, error) {
	if client == nil {
		client = http.DefaultClient
	}
	var body bytes.Buffer
	fmt.Fprintf(&body, "old %d\n", old)
	for _, h := range proof {
		fmt.Fprintf(&body, "%s\n", h)
	}
	body.WriteByte('\n')
	body.Write(checkpoint)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(url, "/")+"/add-checkpoint", &body)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBody {
		return nil, &Error{Status: resp.StatusCode, Reason: fmt.Sprintf("%s: the answer is above %d bytes", url, maxBody)}
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if len(b) == 0 || !bytes.HasPrefix(b, []byte("— ")) || b[len(b)-1] != '\n' {
			return nil, &Error{Status: resp.StatusCode, Reason: fmt.Sprintf("%s: the answer is not note signature lines", url)}
		}
		return b, nil
	case http.StatusConflict:
		if size, err := parseSize(strings.TrimSuffix(string(b), "\n")); err == nil && resp.Header.Get("Content-Type") == "text/x.tlog.size" {
			if size == old {
				return nil, &Error{Status: resp.StatusCode, Size: size, Reason: fmt.Sprintf("%s: the witness cosigned another tree of size %d: a fork", url, size)}
			}
			return nil, &Error{Status: resp.StatusCode, Size: size, Reason: fmt.Sprintf("%s: the witness last cosigned size %d, not %d", url, size, old)}
		}
	}
	msg, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return nil, &Error{Status: resp.StatusCode, Reason: fmt.Sprintf("%s: %s", url, msg)}
}
