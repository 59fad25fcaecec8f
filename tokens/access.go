package tokens

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// accessType is the typ of RFC 9068 access tokens.
const accessType = "at+jwt"

// Claims are an access token's claims (RFC 9068 §2.2).
type Claims struct {
	// Issuer (iss) is the Auth's BaseURL.
	Issuer string `json:"iss"`
	// Subject (sub) is the user's id.
	Subject string `json:"sub"`
	// Audience (aud) is [Config.Audience].
	Audience Audience `json:"aud"`
	// Expiry (exp), IssuedAt (iat) and AuthTime (auth_time, when the
	// user signed in; 0 when unknown) are seconds since 1970.
	Expiry   int64 `json:"exp"`
	IssuedAt int64 `json:"iat"`
	AuthTime int64 `json:"auth_time,omitempty"`
	// ID (jti) is unique to the token.
	ID string `json:"jti"`
	// ClientID (client_id) is the client the token was issued to.
	ClientID string `json:"client_id"`
	// SessionID (sid) is the public id (auth.SessionID) of the token
	// family's session: what the session inventory lists. It cannot be
	// turned back into the session's token.
	SessionID string `json:"sid"`
	// Scope is the granted scope, space-separated; "" for none.
	Scope string `json:"scope,omitempty"`
}

// HasScope reports whether the token was granted scope.
func (c *Claims) HasScope(scope string) bool {
	return slices.Contains(strings.Fields(c.Scope), scope)
}

// Audience is the aud claim: one string or several. It is written as a
// string when it holds one value.
type Audience []string

// MarshalJSON writes one value as a string, several as an array.
func (a Audience) MarshalJSON() ([]byte, error) {
	if len(a) == 1 {
		return json.Marshal(a[0])
	}
	return json.Marshal([]string(a))
}

// UnmarshalJSON reads a string or an array of strings.
func (a *Audience) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = Audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("aud is neither a string nor an array of strings")
	}
	*a = many
	return nil
}

// family is what an access token is issued for.
type family struct {
	userID, clientID, sessionToken, scope string
	authTime                              int64
}

// signAccess signs a new access token for the family.
func (i *Issuer) signAccess(f family, now time.Time) (string, error) {
	k := i.keys.current()
	if !k.live(now) {
		return "", fmt.Errorf("tokens: the current signing key %q is past its NotAfter (%v): put a new key first in the key set", k.ID, k.NotAfter)
	}
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	c := Claims{
		Issuer: i.issuer, Subject: f.userID, Audience: i.audience,
		IssuedAt: now.Unix(), Expiry: now.Add(i.accessTTL).Unix(), AuthTime: f.authTime,
		ID: base64.RawURLEncoding.EncodeToString(jti), ClientID: f.clientID,
		SessionID: sessionID(f.sessionToken), Scope: f.scope,
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.alg), Key: jose.JSONWebKey{Key: k.Signer, KeyID: k.ID}},
		(&jose.SignerOptions{}).WithType(accessType))
	if err != nil {
		return "", fmt.Errorf("tokens: signing key %q: %w", k.ID, err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("tokens: signing an access token: %w", err)
	}
	return jws.CompactSerialize()
}

// maxAccessToken bounds the access tokens Verify reads.
const maxAccessToken = 8 << 10

// Verify checks an access token as a resource server must (RFC 9068 §4):
// a compact JWS of typ at+jwt, signed by a key of the set in force (by its
// kid, with the key's algorithm), issued by this issuer, for one of the
// configured audiences, not expired, issued to a registered client. It
// reads no store: a token stays valid until it expires, even after its
// family ended (keep [Config.AccessTokenTTL] short; [Issuer.Introspect]
// checks the family too). A refused token gives an *Error with
// [CodeInvalidToken].
func (i *Issuer) Verify(ctx context.Context, token string) (*Claims, error) {
	bad := func(why string) (*Claims, error) { return nil, refuse(CodeInvalidToken, "%s", why) }
	if token == "" || len(token) > maxAccessToken || strings.Count(token, ".") != 2 {
		return bad("not an access token (a compact JWS)")
	}
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.EdDSA, jose.ES256})
	if err != nil || len(jws.Signatures) != 1 {
		return bad("not an access token signed with EdDSA or ES256")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, accessType) && !strings.EqualFold(typ, "application/"+accessType) {
		return bad("the token's typ is not at+jwt")
	}
	now := i.now()
	k := i.keys.byID(h.KeyID)
	if k == nil || !k.live(now) {
		return bad("the token is signed by a key that is unknown or no longer in force")
	}
	if h.Algorithm != k.alg {
		return bad("the token's alg is not its key's")
	}
	payload, err := jws.Verify(k.public)
	if err != nil {
		return bad("the signature does not verify")
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return bad("the claims are not valid JSON of an access token")
	}
	switch {
	case c.Issuer != i.issuer:
		return bad("the token is from another issuer")
	case !slices.ContainsFunc(c.Audience, func(a string) bool { return slices.Contains(i.audience, a) }):
		return bad("the token is for another audience")
	case c.Expiry == 0 || now.Unix() >= c.Expiry:
		return bad("the token has expired")
	case c.IssuedAt > now.Add(time.Minute).Unix():
		return bad("the token is issued in the future")
	case c.Subject == "" || c.SessionID == "" || i.client(c.ClientID) == nil:
		return bad("the token lacks sub, sid or a registered client_id")
	}
	return &c, nil
}
