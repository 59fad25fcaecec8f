package oauth

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/authport/authport/core"
)

// SignInParams are the authorization parameters [Flow.Begin] passes from
// a sign-in request to the authorization URL by default (Auth.js's
// signIn(provider, options, authorizationParams)): the OAuth 2.0 and
// OpenID Connect request parameters that shape the provider's login page,
// and the few providers' own that are common. Config.AuthorizationParams
// adds names.
func SignInParams() []string {
	return []string{
		// OpenID Connect Core §3.1.2.1
		"prompt", "login_hint", "ui_locales", "claims_locales", "max_age", "acr_values", "display", "id_token_hint",
		// Google
		"access_type", "hd", "include_granted_scopes",
		// Microsoft Entra ID
		"domain_hint",
		// Auth0, Okta and others
		"organization", "screen_hint", "connection",
		// GitHub
		"login", "allow_signup",
	}
}

// isCheckParam reports whether name is one of the flow's own check
// parameters, which no sign-in request ever sets.
func isCheckParam(name string) bool {
	switch name {
	case "state", "nonce", "code_challenge", "code_challenge_method":
		return true
	}
	return false
}

// maxParamValue bounds one authorization parameter's value from a sign-in
// request.
const maxParamValue = 2048

// paramAllowList returns the names Begin takes from a sign-in request:
// the defaults and extra. A check parameter in extra is an error.
func paramAllowList(extra []string) (map[string]bool, error) {
	allow := map[string]bool{}
	for _, n := range SignInParams() {
		allow[n] = true
	}
	for _, n := range extra {
		switch {
		case isCheckParam(n):
			return nil, fmt.Errorf("%w: oauth: AuthorizationParams names %q, which carries the flow's own check and never comes from a sign-in request", core.ErrInvalidConfig, n)
		case n == "" || strings.ContainsAny(n, "&=#? \t\r\n"):
			return nil, fmt.Errorf("%w: oauth: AuthorizationParams: %q is not a parameter name", core.ErrInvalidConfig, n)
		}
		allow[n] = true
	}
	return allow, nil
}

// signInParams returns the allowed parameters of sets (the first set that
// names a parameter wins), or an error matching [errInvalidParams] for a
// value that cannot be sent.
func (f *Flow) signInParams(sets []url.Values) (url.Values, error) {
	out := url.Values{}
	for _, set := range sets {
		for k, vs := range set {
			if !f.params[k] || out.Has(k) || len(vs) == 0 || vs[0] == "" {
				continue
			}
			v := vs[0]
			if len(v) > maxParamValue || !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return nil, fmt.Errorf("%w: %q: at most %d bytes of UTF-8 text without control characters", errInvalidParams, k, maxParamValue)
			}
			out.Set(k, v)
		}
	}
	return out, nil
}
