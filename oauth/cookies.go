package oauth

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// CheckMaxAge is how long the check cookies live: the user has this long
// to finish signing in at the provider (Auth.js uses the same 15 minutes).
const CheckMaxAge = 15 * time.Minute

// The check cookies' names, as Auth.js names them. On https the names
// carry the __Secure- prefix and the cookies are Secure.
const (
	PKCECookieName  = "authjs.pkce.code_verifier"
	StateCookieName = "authjs.state"
	NonceCookieName = "authjs.nonce"
)

const securePrefix = "__Secure-"

// cookieName is the name of the check cookie base under the flow's
// security setting.
func (f *Flow) cookieName(base string) string {
	if f.secure {
		return securePrefix + base
	}
	return base
}

// setCheck seals value into the check cookie base: the cookie name is the
// salt and the claims are {"value": value}, so Auth.js opens it too.
// crossSitePost is set for providers that call back with a cross-site POST
// (response_mode=form_post, e.g. Apple): browsers do not send SameSite=Lax
// cookies with it, so on https those cookies are SameSite=None (and
// Secure). The checks themselves still stop cross-site forgeries.
func (f *Flow) setCheck(w http.ResponseWriter, base, value string, crossSitePost bool) error {
	name := f.cookieName(base)
	sealed, err := f.seal.Encode(name, map[string]any{"value": value}, CheckMaxAge)
	if err != nil {
		return fmt.Errorf("oauth: sealing the %s cookie: %w", name, err)
	}
	c := f.checkCookie(name, sealed)
	if crossSitePost && f.secure {
		c.SameSite = http.SameSiteNoneMode
	}
	c.MaxAge = int(CheckMaxAge / time.Second)
	c.Expires = f.now().Add(CheckMaxAge).UTC()
	http.SetCookie(w, c)
	return nil
}

func (f *Flow) checkCookie(name, value string) *http.Cookie {
	return &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     "/",
		Secure:   f.secure,
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	}
}

// takeCheck opens the check cookie base of r and, when r carries it,
// tells the browser to drop it: a check value is used once. It returns ""
// with the reason when the cookie is absent or cannot be opened (expired:
// jwt.ErrExpiredToken; tampered with, or sealed with a secret no longer
// configured: jwt.ErrInvalidToken).
func (f *Flow) takeCheck(w http.ResponseWriter, r *http.Request, base string) (value string, reason error) {
	name := f.cookieName(base)
	c, err := r.Cookie(name)
	if err != nil {
		return "", fmt.Errorf("the browser sent no %s cookie (sign-in not started here, started over 15 minutes ago, or cookies blocked)", name)
	}
	drop := f.checkCookie(name, "")
	drop.MaxAge = -1
	drop.Expires = time.Unix(0, 0)
	http.SetCookie(w, drop)
	claims, err := f.seal.Decode(name, strings.TrimSpace(c.Value))
	if err != nil {
		return "", fmt.Errorf("the %s cookie cannot be opened (expired, altered, or sealed with a secret that is no longer configured): %w", name, err)
	}
	v, _ := claims["value"].(string)
	if v == "" {
		return "", fmt.Errorf("the %s cookie holds no value", name)
	}
	return v, nil
}
