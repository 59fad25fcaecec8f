package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
)

// FuzzCallback sends arbitrary callback queries, form bodies and check
// cookies: the flow must reject them with one of its errors, never panic,
// and store nothing.
func FuzzCallback(f *testing.F) {
	f.Add("code=abc&state=xyz", "", "authjs.state", "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2Q0JDLUhTNTEyIn0..a.b.c")
	f.Add("error=access_denied&state=s", "", "authjs.nonce", "%%%")
	f.Add("", "code=1&user=%7B%22name%22%3A1%7D", "authjs.pkce.code_verifier", "")
	f.Add("code=%00&state=%ff", "state=a&state=b", "authjs.state", strings.Repeat("A", 5000))
	fake := newFakeProvider(f)
	s := newSetup(f, fake.client, testBase, oidcProvider(fake.URL(), provider.CheckPKCE, provider.CheckState, provider.CheckNonce))
	f.Fuzz(func(t *testing.T, query, form, cookieName, cookieValue string) {
		method, body := http.MethodGet, ""
		if form != "" {
			method, body = http.MethodPost, form
		}
		r := httptest.NewRequest(method, "/auth/callback/idp", strings.NewReader(body))
		r.URL.RawQuery = query
		if method == http.MethodPost {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		r.Header.Set("Cookie", cookieName+"="+cookieValue)
		in, err := s.flow.Callback(context.Background(), httptest.NewRecorder(), r, "idp", nil)
		if err == nil {
			t.Fatalf("signed in %+v from a forged callback", in)
		}
		var pe *oauth.ProviderError
		known := []error{oauth.ErrStateMissing, oauth.ErrStateMismatch, oauth.ErrVerifierMissing, oauth.ErrNonceMissing,
			oauth.ErrInvalidCallback, oauth.ErrProviderError}
		ok := errors.As(err, &pe)
		for _, k := range known {
			ok = ok || errors.Is(err, k)
		}
		if !ok {
			t.Errorf("error %v is none of the flow's check errors", err)
		}
		if snap := s.store.Snapshot(); len(snap.Users)+len(snap.Sessions) != 0 {
			t.Fatalf("stored %+v", snap)
		}
	})
}
