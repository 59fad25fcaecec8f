package tokens_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/tokens"
)

// FuzzRefreshToken: any refresh_token is refused with an RFC 6749 error
// (invalid_grant, or invalid_request when empty) and changes nothing; only
// the genuine token rotates.
func FuzzRefreshToken(f *testing.F) {
	e := newEnv(f)
	i := e.issuer()
	genuine := e.signIn(i)
	f.Add(genuine.RefreshToken)
	f.Add(genuine.AccessToken)
	f.Add(genuine.RefreshToken[:len(genuine.RefreshToken)-1])
	f.Add("AQ")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		e.t = t // f's methods may not be called from the fuzz function
		before := e.state()
		_, err := i.Refresh(e.ctx, token, clientID)
		if token == genuine.RefreshToken {
			return // rotated (or, later, reuse): by design
		}
		var te *tokens.Error
		if !errors.As(err, &te) || (te.Code != tokens.CodeInvalidGrant && te.Code != tokens.CodeInvalidRequest) || te.Description == "" {
			t.Fatalf("Refresh(%q) = %v; want invalid_grant or invalid_request", token, err)
		}
		if e.state() != before {
			t.Fatalf("Refresh(%q) changed the store", token)
		}
	})
}

// FuzzAuthorizationCode: any code (with a valid verifier) is refused with
// invalid_grant and stores nothing.
func FuzzAuthorizationCode(f *testing.F) {
	e := newEnv(f)
	i := e.issuer()
	req := authorizeRequest()
	genuine := e.code(i, req)
	f.Add(genuine[:len(genuine)-2])
	f.Add(e.signIn(i).RefreshToken)
	f.Add("AQ")
	f.Add("x.y.z")
	f.Fuzz(func(t *testing.T, code string) {
		if code == genuine || code == "" {
			return
		}
		e.t = t
		before := e.state()
		_, err := i.Exchange(e.ctx, tokens.ExchangeRequest{Code: code, CodeVerifier: verifier, RedirectURI: req.RedirectURI, ClientID: clientID})
		var te *tokens.Error
		if !errors.As(err, &te) || te.Code != tokens.CodeInvalidGrant {
			t.Fatalf("Exchange(%q) = %v; want invalid_grant", code, err)
		}
		if e.state() != before {
			t.Fatalf("Exchange(%q) changed the store", code)
		}
	})
}

// FuzzParseKeySet: any bytes give a configuration error or a key set that
// writes back (MarshalPrivateJSON) to a set ParseKeySet reads the same, and
// whose public JWKS holds no private member.
func FuzzParseKeySet(f *testing.F) {
	for _, alg := range []string{tokens.EdDSA, tokens.ES256} {
		k, _ := tokens.GenerateKey(alg, "k-"+alg)
		ks, _ := tokens.NewKeySet(k)
		b, _ := ks.MarshalPrivateJSON()
		f.Add(b)
	}
	f.Add([]byte(`{"keys":[]}`))
	f.Add([]byte(`{"keys":[{"kty":"oct","k":"AAAA","kid":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := tokens.ParseKeySet(data)
		if err != nil {
			if !errors.Is(err, core.ErrInvalidConfig) {
				t.Fatalf("ParseKeySet: %v; want ErrInvalidConfig", err)
			}
			return
		}
		again, err := ks.MarshalPrivateJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := tokens.ParseKeySet(again)
		if err != nil {
			t.Fatalf("ParseKeySet(MarshalPrivateJSON) = %v", err)
		}
		third, _ := back.MarshalPrivateJSON()
		if !bytes.Equal(again, third) {
			t.Fatalf("MarshalPrivateJSON does not round-trip:\n%s\n%s", again, third)
		}
		pub, err := ks.PublicJSON(e0)
		if err != nil || bytes.Contains(pub, []byte(`"d"`)) {
			t.Fatalf("PublicJSON = %s, %v", pub, err)
		}
	})
}

// e0 is a fixed time for the fuzz targets.
var e0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
