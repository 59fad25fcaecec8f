package handler

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
)

// OAuth and OIDC sign-in: the flow (module oauth) makes and checks the
// check values; the handler keeps them between the redirect to the
// provider and its callback in Auth.js's check cookies
// (authjs.pkce.code_verifier, authjs.state, authjs.nonce; __Secure- and
// Secure with Secure cookies), each an Auth.js JWT sealed with the
// handler's codec, the cookie name as the salt and {"value": v} as the
// claims, so that Auth.js opens them too. They live oauth.CheckMaxAge (15
// minutes), HttpOnly, Path=/, host-only and SameSite=Lax whatever
// auth.Config.Cookies says (the provider's redirect back is a cross-site
// top-level navigation, which Lax cookies come with), or SameSite=None on
// https for a provider that calls back with a cross-site POST
// (response_mode=form_post). The callback drops each one it reads: a check
// value is used once.

// maxCallbackBody bounds a form_post callback's body.
const maxCallbackBody = 64 << 10

// checkCookie is a check cookie: the handler's attributes (h.cookie),
// host-only, SameSite=Lax, or SameSite=None with Secure cookies when
// crossSitePost.
func (h *Handler) checkCookie(name, value string, maxAge time.Duration, crossSitePost bool) *http.Cookie {
	c := h.cookie(name, value, maxAge, false)
	c.SameSite = http.SameSiteLaxMode
	if crossSitePost && c.Secure {
		c.SameSite = http.SameSiteNoneMode
	}
	return c
}

// checkSlot is one check: its cookie's name and its value in an
// oauth.Checks.
type checkSlot struct {
	check provider.Check
	name  string
	value *string
}

// checkSlots returns the slots of the three checks, in the order their
// cookies are set: PKCE code verifier, state, nonce.
func (h *Handler) checkSlots(checks *oauth.Checks) [3]checkSlot {
	return [3]checkSlot{
		{provider.CheckPKCE, h.names.PKCECodeVerifier, &checks.CodeVerifier},
		{provider.CheckState, h.names.State, &checks.State},
		{provider.CheckNonce, h.names.Nonce, &checks.Nonce},
	}
}

// beginOAuth starts signing in with the OAuth or OIDC provider id for the
// POST /signin request r: it sets the check cookies of the flow's check
// values on w and returns the authorization URL to redirect to. The
// request's authorization parameters (Auth.js's signIn(id, options,
// authorizationParams) puts them in the query), e.g. prompt or login_hint,
// go to the flow, which takes only its allow-list.
func (h *Handler) beginOAuth(w http.ResponseWriter, r *http.Request, id string) (string, error) {
	a, err := h.flow.Begin(r.Context(), id, r.URL.Query(), r.PostForm)
	if err != nil {
		return "", err
	}
	for _, c := range h.checkSlots(&a.Checks) {
		if *c.value == "" {
			continue
		}
		sealed, err := h.codec.Encode(c.name, map[string]any{"value": *c.value}, oauth.CheckMaxAge)
		if err != nil {
			return "", fmt.Errorf("sealing the %s cookie: %w", c.name, err)
		}
		http.SetCookie(w, h.checkCookie(c.name, sealed, oauth.CheckMaxAge, a.FormPost))
	}
	return a.URL, nil
}

// oauthCallback completes signing in with the OAuth or OIDC provider id
// for the callback request r (GET, or POST for form_post), with the check
// values of r's check cookies, which it drops; user is the signed-in
// caller, or nil.
func (h *Handler) oauthCallback(w http.ResponseWriter, r *http.Request, id string, user *core.User) (*auth.SignIn, error) {
	checks := h.takeChecks(w, r)
	params, err := callbackParams(w, r)
	if err != nil {
		return nil, err
	}
	return h.flow.Callback(r.Context(), id, params, checks, user)
}

// takeChecks opens r's check cookies and tells the browser to drop each
// one r carries. A value it cannot give has its reason in Missing: the
// flow says it when the provider's checks need the value.
func (h *Handler) takeChecks(w http.ResponseWriter, r *http.Request) oauth.Checks {
	var checks oauth.Checks
	for _, c := range h.checkSlots(&checks) {
		v, err := h.takeCheck(w, r, c.name)
		if err != nil {
			if checks.Missing == nil {
				checks.Missing = map[provider.Check]error{}
			}
			checks.Missing[c.check] = err
		}
		*c.value = v
	}
	return checks
}

// takeCheck opens the check cookie name of r and, when r carries it,
// tells the browser to drop it. It returns "" with the reason when the
// cookie is absent or cannot be opened (expired: jwt.ErrExpiredToken;
// altered, or sealed with a secret no longer configured:
// jwt.ErrInvalidToken).
func (h *Handler) takeCheck(w http.ResponseWriter, r *http.Request, name string) (string, error) {
	c, err := r.Cookie(name)
	if err != nil {
		return "", fmt.Errorf("the browser sent no %s cookie (sign-in not started here, started over 15 minutes ago, or cookies blocked)", name)
	}
	http.SetCookie(w, h.checkCookie(name, "", -1, false))
	claims, err := h.codec.Decode(name, strings.TrimSpace(c.Value))
	if err != nil {
		return "", fmt.Errorf("the %s cookie cannot be opened (expired, altered, or sealed with a secret that is no longer configured): %w", name, err)
	}
	v, _ := claims["value"].(string)
	if v == "" {
		return "", fmt.Errorf("the %s cookie holds no value", name)
	}
	return v, nil
}

// callbackParams returns the callback's parameters: the query, and for a
// POST (response_mode=form_post) the form body too, bounded to
// maxCallbackBody. A body that cannot be read fails the callback
// (OAuthCallbackError).
func callbackParams(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	if r.Method != http.MethodPost {
		return r.URL.Query(), nil
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxCallbackBody)
	}
	if err := r.ParseForm(); err != nil {
		return nil, auth.Fail(auth.CodeOAuthCallback, fmt.Errorf("reading the callback's form: %w", err))
	}
	return r.Form, nil
}
