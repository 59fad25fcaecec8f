package tokens

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

type claimsKey struct{}

// WithClaims returns a copy of ctx carrying c, as [Issuer.Require] does.
func WithClaims(ctx context.Context, c *Claims) context.Context {
	return context.WithValue(ctx, claimsKey{}, c)
}

// FromContext returns the access token's claims [Issuer.Require] put in
// ctx.
func FromContext(ctx context.Context) (*Claims, bool) {
	c, ok := ctx.Value(claimsKey{}).(*Claims)
	return c, ok && c != nil
}

// Require lets through to next only requests with a valid access token in
// "Authorization: Bearer <token>" ([Issuer.Verify]), with its claims in
// the context ([FromContext]); it is the middleware of an API server that
// native clients call. Others get RFC 6750 §3 answers: 401 with
// WWW-Authenticate: Bearer realm=… when no token is presented, 401 with
// error="invalid_token" for a refused token, 400 with
// error="invalid_request" for a malformed header (several Authorization
// headers, or a token in the query or body is not looked at). With scopes,
// the token must have been granted every one of them, else 403 with
// error="insufficient_scope".
func (i *Issuer) Require(next http.Handler, scopes ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values("Authorization")
		if len(values) == 0 {
			i.challenge(w, http.StatusUnauthorized, "", "", scopes)
			return
		}
		scheme, token, _ := strings.Cut(strings.TrimSpace(values[0]), " ")
		if len(values) > 1 || !strings.EqualFold(scheme, "Bearer") {
			if len(values) == 1 && !strings.EqualFold(scheme, "Bearer") {
				i.challenge(w, http.StatusUnauthorized, "", "", scopes)
				return
			}
			i.challenge(w, http.StatusBadRequest, CodeInvalidRequest, "send one Authorization: Bearer header", scopes)
			return
		}
		c, err := i.Verify(r.Context(), strings.TrimSpace(token))
		if err != nil {
			i.challenge(w, http.StatusUnauthorized, CodeInvalidToken, AsError(err).Description, scopes)
			return
		}
		for _, s := range scopes {
			if !c.HasScope(s) {
				i.challenge(w, http.StatusForbidden, "insufficient_scope", "the token lacks a scope this resource needs", scopes)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(WithClaims(r.Context(), c)))
	})
}

// challenge answers an RFC 6750 refusal.
func (i *Issuer) challenge(w http.ResponseWriter, status int, code, desc string, scopes []string) {
	v := `Bearer realm=` + strconv.Quote(i.issuer)
	if code != "" {
		v += `, error="` + code + `"`
		if desc != "" {
			v += `, error_description=` + strconv.Quote(desc)
		}
	}
	if len(scopes) > 0 && (code == "insufficient_scope" || code == "") {
		v += `, scope=` + strconv.Quote(strings.Join(scopes, " "))
	}
	w.Header().Set("WWW-Authenticate", v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if code == "" {
		code = "unauthorized"
		desc = "an access token is required"
	}
	_ = json.NewEncoder(w).Encode(Error{Code: code, Description: desc})
}
