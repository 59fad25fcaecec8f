package passkeytest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/passkey"
)

// Client calls the two ceremonies of a [passkey.Passkeys] as the handler
// does for the browser and the page script, in process (no HTTP server):
// the options of GET {BaseURL}/webauthn-options/{Provider} and the
// callback of POST {BaseURL}/callback/{Provider}. It hands back the
// challenge the options return, which the handler would keep in its
// challenge cookie, for the test to give to the callback.
type Client struct {
	Passkeys *passkey.Passkeys
	// BaseURL is the auth routes' URL, e.g. "http://localhost:3000/auth".
	BaseURL string
	// Provider is the WebAuthn provider's id, e.g. "passkey".
	Provider string
}

// Options asks for the options with the query (e.g. "email=a@b.c" or
// "action=register") as user (nil: not signed in), and returns the decoded
// body and the challenge to remember.
func (c Client) Options(ctx context.Context, query string, user *core.User) (Options, string, error) {
	q, err := url.ParseQuery(query)
	if err != nil {
		return Options{}, "", fmt.Errorf("passkeytest: query %q: %w", query, err)
	}
	body, challenge, err := c.Passkeys.Options(ctx, c.Provider, q, user)
	if err != nil {
		return Options{}, "", err
	}
	return decodeOptions(body, challenge)
}

// SecondFactorOptions asks for the options of a passkey answering as a
// second factor ([passkey.Passkeys.SecondFactorOptions]): for the pending
// sign-in pendingToken, or for the signed-in userID re-authenticating
// (pendingToken ""). It returns the decoded body and the challenge to
// remember.
func (c Client) SecondFactorOptions(ctx context.Context, userID, pendingToken string) (Options, string, error) {
	body, challenge, err := c.Passkeys.SecondFactorOptions(ctx, c.Provider, userID, pendingToken)
	if err != nil {
		return Options{}, "", err
	}
	return decodeOptions(body, challenge)
}

// VerifySecondFactor posts the assertion data as the page script does
// (action "authenticate") to [passkey.Passkeys.VerifySecondFactor] with the
// remembered challenge and what the options were asked for.
func (c Client) VerifySecondFactor(ctx context.Context, challenge, data, userID, pendingToken, current string, trustDevice bool) (*auth.SignIn, error) {
	form := url.Values{"action": {"authenticate"}, "data": {data}, "csrfToken": {"checked-by-the-handler"}}
	return c.Passkeys.VerifySecondFactor(ctx, c.Provider, form, challenge, userID, pendingToken, current, trustDevice)
}

// decodeOptions decodes an options body as the page script reads it.
func decodeOptions(body any, challenge string) (Options, string, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return Options{}, "", fmt.Errorf("passkeytest: options body: %w", err)
	}
	var out Options
	if err := json.Unmarshal(raw, &out); err != nil {
		return Options{}, "", fmt.Errorf("passkeytest: options body %s: %w", raw, err)
	}
	return out, challenge, nil
}

// Callback posts the form the page script submits (action, data and a
// CSRF token field, which the handler checks) with the remembered
// challenge, as user, and returns the sign-in.
func (c Client) Callback(ctx context.Context, challenge, action, data string, user *core.User) (*auth.SignIn, error) {
	form := url.Values{"action": {action}, "data": {data}, "csrfToken": {"checked-by-the-handler"}}
	return c.Passkeys.Callback(ctx, c.Provider, form, challenge, user)
}
