package cli

import (
	"errors"
	"net/url"
	"strings"
)

// splitURL splits a transcript location, a postgres:// URL naming a store
// and, with ?session=NAME, one chain in it, into the store's URL (what// postgres.Open reads: without the session parameter) and the session it names
// ("": all of them). The query is split as pgx splits it ('&'-separated
// pairs), and every other pair is left as written: net/url would drop a
// pair holding ';'.
func splitURL(raw string) (store, session string, err error) {
	if _, err := url.Parse(raw); err != nil {
		return "", "", errors.New("a transcript URL that does not parse")
	}
	base, query, ok := strings.Cut(raw, "?")
	if !ok {
		return raw, "", nil
	}
	var kept []string
	for _, pair := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(k); err == nil && k == "session" {
			if session, err = url.QueryUnescape(v); err != nil {
				return "", "", errors.New("a transcript URL whose session does not parse")
			}
			continue
		}
		kept = append(kept, pair)
	}
	if len(kept) == 0 {
		return base, session, nil
	}
	return base + "?" + strings.Join(kept, "&"), session, nil
}
