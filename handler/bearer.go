package handler

import (
	"context"
	"net/http"
	"strings"

	"github.com/authport/authport/core/auth"
)

// maxBearerToken bounds a bearer token: a JWT session the size of a
// session cookie split into a few chunks fits; anything longer is not a
// session and is refused before any work.
const maxBearerToken = 16 << 10

// bearerToken returns the token of a single "Authorization: Bearer
// <token>" header (the scheme in any case, RFC 9110), when the token has
// RFC 6750's b64token syntax and a sane length.
func bearerToken(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false // several Authorization headers: ambiguous
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	if token == "" || len(token) > maxBearerToken {
		return "", false
	}
	i := 0
	for ; i < len(token); i++ {
		c := token[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			break
		}
	}
	if i == 0 {
		return "", false
	}
	for ; i < len(token); i++ {
		if token[i] != '=' {
			return "", false
		}
	}
	return token, true
}

// isBearer reports whether the Authorization header names the Bearer
// scheme (well-formed or not).
func isBearer(values []string) bool {
	for _, v := range values {
		scheme, _, _ := strings.Cut(strings.TrimLeft(v, " "), " ")
		if strings.EqualFold(scheme, "Bearer") {
			return true
		}
	}
	return false
}

// carriesCookie reports whether r has a cookie called name, or a chunk of
// it (name.0, name.1, …), with any value.
func carriesCookie(r *http.Request, name string) bool {
	for _, line := range r.Header["Cookie"] {
		for part := range strings.SplitSeq(line, ";") {
			k, _, _ := strings.Cut(strings.Trim(part, " \t"), "=")
			k = strings.TrimRight(k, " \t")
			if k == name || strings.HasPrefix(k, name) && len(k) > len(name) && k[len(name)] == '.' {
				return true
			}
		}
	}
	return false
}

// bearerSession reads the session a bearer token names: with database
// sessions the token is looked up as the cookie's would be (one
// getSessionAndUser, no write when unknown), with JWT sessions it is
// decrypted as the session cookie (the cookie name is the key's salt). A
// token that is no session gives nil and no error.
func (rd *Reader) bearerSession(ctx context.Context, token string) (*Session, error) {
	var s *Session
	if rd.strategy == auth.StrategyJWT {
		claims, err := rd.codec.Decode(rd.names.SessionToken, token)
		if err != nil {
			rd.log.DebugContext(ctx, "authport: JWT bearer token ignored", "reason", errReason(err))
			return nil, nil
		}
		s = sessionFromClaims(claims)
		s.auth = rd.auth
	} else {
		var err error
		if s, err = rd.databaseSession(ctx, token); s == nil || err != nil {
			return nil, err
		}
	}
	s.Bearer = true
	return s, nil
}
