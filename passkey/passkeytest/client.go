package passkeytest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/passkey"
)

// Client calls the two routes of a [passkey.Passkeys] as the browser and
// the page script do, in process (no HTTP server): GET
// {BaseURL}/webauthn-options/{Provider} and POST {BaseURL}/callback/{Provider}.
type Client struct {
	Passkeys *passkey.Passkeys
	// BaseURL is the auth routes' URL, e.g. "http://localhost:3000/auth".
	BaseURL string
	// Provider is the WebAuthn provider's id, e.g. "passkey".
	Provider string
}

// Options calls the options route with the query (e.g. "email=a@b.c" or
// "action=register") as user (nil: not signed in), and returns the decoded
// body and the cookies set.
func (c Client) Options(ctx context.Context, query string, user *core.User) (Options, []*http.Cookie, error) {
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/webauthn-options/"+c.Provider+"?"+query, nil)
	w := httptest.NewRecorder()
	body, err := c.Passkeys.Options(ctx, w, r, c.Provider, user)
	if err != nil {
		return Options{}, nil, err
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return Options{}, nil, fmt.Errorf("passkeytest: options body: %w", err)
	}
	var out Options
	if err := json.Unmarshal(raw, &out); err != nil {
		return Options{}, nil, fmt.Errorf("passkeytest: options body %s: %w", raw, err)
	}
	return out, w.Result().Cookies(), nil
}

// Callback posts the form the page script submits (action, data and a
// CSRF token field, which the handler checks), with the cookies, as user.
// It returns the sign-in and the cookies the response set.
func (c Client) Callback(ctx context.Context, cookies []*http.Cookie, action, data string, user *core.User) (*auth.SignIn, []*http.Cookie, error) {
	form := url.Values{"action": {action}, "data": {data}, "csrfToken": {"checked-by-the-handler"}}
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+"/callback/"+c.Provider, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, ck := range cookies {
		r.AddCookie(ck)
	}
	w := httptest.NewRecorder()
	s, err := c.Passkeys.Callback(ctx, w, r, c.Provider, user)
	return s, w.Result().Cookies(), err
}
