package tokens

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/authport/authport/core"
)

// AuthorizeRequest is an authorization request (RFC 6749 §4.1.1 with
// PKCE, RFC 7636 §4.3): GET {base}/authorize's query.
type AuthorizeRequest struct {
	ResponseType        string // "code"
	ClientID            string
	RedirectURI         string
	CodeChallenge       string
	CodeChallengeMethod string // "S256"
	State               string
	Scope               string
}

// AuthorizeRequestFrom reads an authorization request from a query. A
// parameter given twice is refused by [Issuer.Authorize] (RFC 6749 §3.1),
// reported here as Duplicate.
func AuthorizeRequestFrom(q url.Values) (req AuthorizeRequest, duplicate string) {
	get := func(k string) string {
		if len(q[k]) > 1 && duplicate == "" {
			duplicate = k
		}
		return q.Get(k)
	}
	req = AuthorizeRequest{
		ResponseType: get("response_type"), ClientID: get("client_id"), RedirectURI: get("redirect_uri"),
		CodeChallenge: get("code_challenge"), CodeChallengeMethod: get("code_challenge_method"),
		State: get("state"), Scope: get("scope"),
	}
	return req, duplicate
}

// code is the content of an authorization code.
type code struct {
	nonce       string
	expires     time.Time
	authTime    int64
	userID      string
	clientID    string
	redirectURI string
	challenge   string
	scope       string
}

func (i *Issuer) sealCode(c code) string {
	var w writer
	w.str(c.nonce)
	w.time(c.expires)
	w.int(c.authTime)
	w.str(c.userID)
	w.str(c.clientID)
	w.str(c.redirectURI)
	w.str(c.challenge)
	w.str(c.scope)
	return i.codes.seal(w.b)
}

func (i *Issuer) openCode(text string) (code, error) {
	pt, err := i.codes.open(text)
	if err != nil {
		return code{}, err
	}
	r := reader{b: pt}
	c := code{nonce: r.str(), expires: r.time(), authTime: r.int(), userID: r.str(), clientID: r.str(),
		redirectURI: r.str(), challenge: r.str(), scope: r.str()}
	if err := r.done(); err != nil || c.nonce == "" || c.userID == "" || c.clientID == "" || c.challenge == "" {
		return code{}, errUnsealed
	}
	return c, nil
}

// Authorize answers an authorization request for the signed-in user
// (userID; "" when nobody is signed in), signed in at authTime (zero when
// unknown). It returns the URL to redirect the browser to: the client's
// redirect URI with a code and the state (and iss, RFC 9207), or with an
// error (RFC 6749 §4.1.2.1) when the request is wrong in a way the client
// should hear of.
//
// An unknown client_id or a redirect_uri the client did not register
// gives an *Error and no URL: the caller shows an error page and must not
// redirect (that would be an open redirect). A valid request without a
// user gives [ErrSignInRequired]: send the browser to sign in and back.
//
// The code is sealed (user, client, redirect URI, challenge, scope,
// expiry in [CodeTTL], a random nonce): nothing is stored until it is
// exchanged, once ([Issuer.Exchange]).
func (i *Issuer) Authorize(req AuthorizeRequest, duplicate, userID string, authTime time.Time) (string, error) {
	if req.ClientID == "" {
		return "", refuse(CodeInvalidRequest, "client_id is required")
	}
	c := i.client(req.ClientID)
	if c == nil {
		return "", refuse(CodeInvalidClient, "no client is registered with this client_id")
	}
	if req.RedirectURI == "" {
		// A native client has several redirect URIs, or a loopback one
		// whose port varies: it must say which (RFC 8252 §8.10).
		return "", refuse(CodeInvalidRequest, "redirect_uri is required")
	}
	if !c.redirectAllowed(req.RedirectURI) {
		return "", refuse(CodeInvalidRequest, "redirect_uri is not one the client registered")
	}
	back := func(q url.Values) string {
		if req.State != "" {
			q.Set("state", req.State)
		}
		q.Set("iss", i.issuer)
		sep := "?"
		if strings.Contains(req.RedirectURI, "?") {
			sep = "&"
		}
		return req.RedirectURI + sep + q.Encode()
	}
	fail := func(code, desc string) (string, error) {
		return back(url.Values{"error": {code}, "error_description": {desc}}), nil
	}
	switch {
	case duplicate != "":
		return fail(CodeInvalidRequest, duplicate+" is given more than once")
	case req.ResponseType != "code":
		return fail(CodeUnsupportedResponseType, "response_type must be code")
	case req.CodeChallengeMethod != "S256":
		return fail(CodeInvalidRequest, "PKCE is required with code_challenge_method S256")
	case !validChallenge(req.CodeChallenge):
		return fail(CodeInvalidRequest, "code_challenge must be the base64url SHA-256 of the code_verifier (43 characters)")
	case len(req.State) > 1024:
		return fail(CodeInvalidRequest, "state is too long")
	}
	scope, ok := c.scopeAllowed(req.Scope)
	if !ok {
		return fail(CodeInvalidScope, "the client may not ask for this scope")
	}
	if userID == "" {
		return "", ErrSignInRequired
	}
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	var at int64
	if !authTime.IsZero() {
		at = authTime.Unix()
	}
	sealed := i.sealCode(code{
		nonce: base64.RawURLEncoding.EncodeToString(nonce), expires: i.now().Add(CodeTTL), authTime: at,
		userID: userID, clientID: c.ID, redirectURI: req.RedirectURI, challenge: req.CodeChallenge, scope: scope,
	})
	return back(url.Values{"code": {sealed}}), nil
}

// validChallenge reports whether s is a base64url SHA-256 digest.
func validChallenge(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == sha256.Size && len(s) == 43
}

// validVerifier reports whether v is an RFC 7636 §4.1 code_verifier: 43
// to 128 unreserved characters.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// ExchangeRequest is grant_type=authorization_code's parameters.
type ExchangeRequest struct {
	Code         string
	CodeVerifier string
	RedirectURI  string
	ClientID     string
}

// Exchange answers grant_type=authorization_code: it checks the code
// (sealed by this issuer, unexpired, for this client and redirect URI) and
// the PKCE verifier, uses the code up (a single-use record, auth.Edge.UseOnce,
// shared by every instance on the store), and starts a token family
// ([Issuer.Issue]). Every refusal is an *Error and, but for a reused code
// (invalid_grant), changes nothing.
func (i *Issuer) Exchange(ctx context.Context, req ExchangeRequest) (*TokenResponse, error) {
	switch {
	case req.ClientID == "":
		return nil, refuse(CodeInvalidRequest, "client_id is required")
	case i.client(req.ClientID) == nil:
		return nil, refuse(CodeInvalidClient, "no client is registered with this client_id")
	case req.Code == "":
		return nil, refuse(CodeInvalidRequest, "code is required")
	case req.CodeVerifier == "":
		return nil, refuse(CodeInvalidRequest, "code_verifier is required (PKCE)")
	case !validVerifier(req.CodeVerifier):
		return nil, refuse(CodeInvalidRequest, "code_verifier must be 43 to 128 unreserved characters (RFC 7636 §4.1)")
	}
	c, err := i.openCode(req.Code)
	if err != nil {
		return nil, refuse(CodeInvalidGrant, "the code is malformed or not from this server")
	}
	now := i.now()
	sum := sha256.Sum256([]byte(req.CodeVerifier))
	switch {
	case !now.Before(c.expires):
		return nil, refuse(CodeInvalidGrant, "the code has expired; authorize again")
	case c.clientID != req.ClientID:
		return nil, refuse(CodeInvalidGrant, "the code was issued to another client")
	case c.redirectURI != req.RedirectURI:
		return nil, refuse(CodeInvalidGrant, "redirect_uri is not the one the code was sent to")
	case subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(c.challenge)) != 1:
		return nil, refuse(CodeInvalidGrant, "code_verifier does not match the code_challenge")
	}
	if err := i.edge.UseOnce(ctx, "authorization-code", c.nonce, c.expires.Add(time.Minute)); err != nil {
		if errors.Is(err, core.ErrAlreadyExists) {
			return nil, refuse(CodeInvalidGrant, "the code was used already")
		}
		return nil, err
	}
	var authTime time.Time
	if c.authTime != 0 {
		authTime = time.Unix(c.authTime, 0)
	}
	return i.Issue(ctx, c.userID, c.clientID, IssueOptions{Scope: c.scope, AuthTime: authTime})
}
