// Package dsn shows database URLs in messages without their secrets.
package dsn

import "net/url"

// Redacted is a connection URL as a message may quote it: the password,
// given as user:password@ or as ?password=, replaced by xxxxx; a URL that
// does not parse is not quoted at all.
func Redacted(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(a connection URL that does not parse)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}
