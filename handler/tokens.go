package handler

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/tokens"
)

// The routes of tokens for native clients (mobile, desktop and command-line
// applications; RFC 8252), served when Config.Tokens is set (404
// otherwise), under the handler's base path. They follow OAuth 2.0: the
// authorization code flow with PKCE, then short-lived access JWTs (RFC
// 9068) and rotating refresh tokens ([tokens.Issuer]).
//
//	GET  /authorize   the authorization request: signed out, the browser goes to the sign-in page and back; signed in (database or JWT session), to the client's redirect URI with a code
//	POST /token       grant_type authorization_code (code, code_verifier, redirect_uri, client_id) or refresh_token (refresh_token, client_id) → RFC 6749 §5.1 JSON
//	GET  /jwks        the public keys that verify access tokens (a JWK Set)
//	POST /revoke      RFC 7009: a refresh token ends its family (token, client_id)
//	POST /introspect  RFC 7662, for the application's own services: needs tokens.Config.IntrospectionSecret (HTTP Basic password or Bearer)
//
// The POST routes take application/x-www-form-urlencoded bodies and
// answer JSON with Cache-Control: no-store, errors as RFC 6749 §5.2
// ({"error","error_description"}). They carry no CSRF token: a native
// client has no cookie to protect, and nothing on them reads the
// browser's session. /authorize is a browser page: it reads the session
// cookie, and an unknown client or redirect URI gets an error page,
// never a redirect.

// tokenRoutes are the routes of the tokens, added to routeTable.
func tokenRoutes(m map[routeKey]route) {
	m[routeKey{"authorize", false}] = route{"GET", (*Handler).serveAuthorize}
	m[routeKey{"token", false}] = route{"POST", (*Handler).serveToken}
	m[routeKey{"jwks", false}] = route{"GET", (*Handler).serveJWKS}
	m[routeKey{"revoke", false}] = route{"POST", (*Handler).serveRevoke}
	m[routeKey{"introspect", false}] = route{"POST", (*Handler).serveIntrospect}
}

// checkTokens checks Config.Tokens against the handler's Auth.
func checkTokens(t *tokens.Issuer, settings auth.Settings) error {
	if t != nil && t.Issuer() != settings.BaseURL {
		return errors.New("Config.Tokens was built on an Auth with another BaseURL (" + t.Issuer() + "): build it with the handler's Auth")
	}
	return nil
}

// serveAuthorize answers GET /authorize.
func (h *Handler) serveAuthorize(w http.ResponseWriter, r *http.Request, _ string) {
	if h.tokens == nil {
		h.notFound(w, r)
		return
	}
	ctx := r.Context()
	req, dup := tokens.AuthorizeRequestFrom(r.URL.Query())
	s, _, err := h.session(ctx, r)
	if err != nil {
		h.log.ErrorContext(ctx, "authport: authorize: the session could not be read", "error", err)
		h.authorizeError(w, r, http.StatusInternalServerError, "The session could not be read. Try again later.")
		return
	}
	userID := ""
	if s != nil {
		userID = s.User.ID
		if s.extended {
			h.writeSessionCookie(w, core.Session{SessionToken: s.token, Expires: s.Expires})
		}
	}
	target, err := h.tokens.Authorize(req, dup, userID, time.Time{})
	switch {
	case errors.Is(err, tokens.ErrSignInRequired):
		page := h.pageURL(h.pages.SignIn, "signin")
		sep := "?"
		if strings.Contains(page, "?") {
			sep = "&"
		}
		noStore(w)
		http.Redirect(w, r, page+sep+"callbackUrl="+queryEscape(h.base+"/authorize?"+r.URL.RawQuery), http.StatusFound)
	case err != nil:
		te := tokens.AsError(err)
		h.log.InfoContext(ctx, "authport: authorization request refused", "error_code", te.Code, "reason", te.Description)
		h.authorizeError(w, r, http.StatusBadRequest, "The application's sign-in request is not valid ("+te.Code+": "+te.Description+").")
	default:
		noStore(w)
		http.Redirect(w, r, target, http.StatusFound)
	}
}

// authorizeError shows the error page for an authorization request that
// cannot be sent back to the client.
func (h *Handler) authorizeError(w http.ResponseWriter, r *http.Request, status int, message string) {
	d := h.pageData(r, "", "")
	d.Error, d.Heading, d.Message = "AuthorizationRequest", "Request refused", message
	noStore(w)
	h.render(w, status, "error", d)
}

// tokenForm parses a token route's form body and returns its single
// values, answering the RFC 6749 error itself when it cannot.
func (h *Handler) tokenForm(w http.ResponseWriter, r *http.Request) (get func(string) string, ok bool) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		writeTokenError(w, &tokens.Error{Code: tokens.CodeInvalidRequest, Description: "send the parameters as application/x-www-form-urlencoded"})
		return nil, false
	}
	if err := r.ParseForm(); err != nil {
		writeTokenError(w, &tokens.Error{Code: tokens.CodeInvalidRequest, Description: "the body could not be read as a form"})
		return nil, false
	}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			writeTokenError(w, &tokens.Error{Code: tokens.CodeInvalidRequest, Description: k + " is given more than once"})
			return nil, false
		}
	}
	return r.PostForm.Get, true
}

// serveToken answers POST /token.
func (h *Handler) serveToken(w http.ResponseWriter, r *http.Request, _ string) {
	if h.tokens == nil {
		h.notFound(w, r)
		return
	}
	get, ok := h.tokenForm(w, r)
	if !ok {
		return
	}
	ip, ua := h.client(r)
	ctx := auth.WithClient(r.Context(), auth.Client{IPAddress: ip, UserAgent: ua})
	var resp *tokens.TokenResponse
	var err error
	switch get("grant_type") {
	case "authorization_code":
		resp, err = h.tokens.Exchange(ctx, tokens.ExchangeRequest{Code: get("code"), CodeVerifier: get("code_verifier"),
			RedirectURI: get("redirect_uri"), ClientID: get("client_id")})
	case "refresh_token":
		resp, err = h.tokens.Refresh(ctx, get("refresh_token"), get("client_id"))
	case "":
		err = &tokens.Error{Code: tokens.CodeInvalidRequest, Description: "grant_type is required"}
	default:
		err = &tokens.Error{Code: tokens.CodeUnsupportedGrantType, Description: "grant_type must be authorization_code or refresh_token"}
	}
	if err != nil {
		h.tokenFailed(w, r, "token", err)
		return
	}
	writeTokenJSON(w, http.StatusOK, resp)
}

// serveJWKS answers GET /jwks: cacheable for five minutes, so a verifier
// sees a new key soon after a rotation (publish a new key a few minutes
// before it signs, or keep the old one for the access-token lifetime).
func (h *Handler) serveJWKS(w http.ResponseWriter, r *http.Request, _ string) {
	if h.tokens == nil {
		h.notFound(w, r)
		return
	}
	body, err := h.tokens.JWKS()
	if err != nil {
		h.log.ErrorContext(r.Context(), "authport: jwks failed", "error", err)
		writeTokenError(w, tokens.AsError(err))
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(body)
}

// serveRevoke answers POST /revoke (RFC 7009).
func (h *Handler) serveRevoke(w http.ResponseWriter, r *http.Request, _ string) {
	if h.tokens == nil {
		h.notFound(w, r)
		return
	}
	get, ok := h.tokenForm(w, r)
	if !ok {
		return
	}
	if err := h.tokens.Revoke(r.Context(), get("token"), get("client_id")); err != nil {
		h.tokenFailed(w, r, "revoke", err)
		return
	}
	writeTokenJSON(w, http.StatusOK, struct{}{})
}

// serveIntrospect answers POST /introspect (RFC 7662).
func (h *Handler) serveIntrospect(w http.ResponseWriter, r *http.Request, _ string) {
	if h.tokens == nil || !h.tokens.IntrospectionEnabled() {
		h.notFound(w, r)
		return
	}
	if !h.tokens.IntrospectionAllowed(r.Header["Authorization"]) {
		w.Header().Set("WWW-Authenticate", `Basic realm="authport introspection"`)
		writeTokenJSON(w, http.StatusUnauthorized, &tokens.Error{Code: tokens.CodeInvalidClient, Description: "introspection needs the introspection secret (HTTP Basic password or Bearer)"})
		return
	}
	get, ok := h.tokenForm(w, r)
	if !ok {
		return
	}
	if get("token") == "" {
		writeTokenError(w, &tokens.Error{Code: tokens.CodeInvalidRequest, Description: "token is required"})
		return
	}
	in, err := h.tokens.Introspect(r.Context(), get("token"))
	if err != nil {
		h.tokenFailed(w, r, "introspect", err)
		return
	}
	writeTokenJSON(w, http.StatusOK, in)
}

// tokenFailed answers a token route's error: a refusal as its RFC 6749
// error, a failure as server_error, logged.
func (h *Handler) tokenFailed(w http.ResponseWriter, r *http.Request, route string, err error) {
	te := tokens.AsError(err)
	if te.Code == tokens.CodeServerError {
		h.log.ErrorContext(r.Context(), "authport: token route failed", "route", route, "error", err)
	} else {
		h.log.InfoContext(r.Context(), "authport: token request refused", "route", route, "error_code", te.Code, "reason", te.Description)
	}
	writeTokenError(w, te)
}

func writeTokenError(w http.ResponseWriter, te *tokens.Error) { writeTokenJSON(w, te.Status(), te) }

// writeTokenJSON answers JSON with RFC 6749 §5.1's Cache-Control: no-store
// and Pragma: no-cache.
func writeTokenJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, status, v, false)
}
