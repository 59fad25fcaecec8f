package oauth_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
)

// FuzzCallback sends arbitrary callback queries and form bodies, with
// arbitrary kept check values (the state and the PKCE verifier; no nonce,
// so that no callback gets as far as the provider): the flow must reject
// them with one of its errors and the callback's code, never panic, and
// store nothing. The handler's FuzzOAuthCallback sends arbitrary check
// cookies.
func FuzzCallback(f *testing.F) {
	f.Add("code=abc&state=xyz", "", "xyz", "")
	f.Add("error=access_denied&state=s", "", "s", "v")
	f.Add("", "code=1&user=%7B%22name%22%3A1%7D", "", "verifier")
	f.Add("code=%00&state=%ff", "state=a&state=b", "%ff", strings.Repeat("A", 5000))
	fake := newFakeProvider(f)
	s := newSetup(f, fake.client, testBase, oidcProvider(fake.URL(), provider.CheckPKCE, provider.CheckState, provider.CheckNonce))
	f.Fuzz(func(t *testing.T, query, form, state, verifier string) {
		// The callback's parameters as r.Form holds them: the form body
		// first, then the query.
		params, _ := url.ParseQuery(form)
		if params == nil {
			params = url.Values{}
		}
		q, _ := url.ParseQuery(query)
		for k, vs := range q {
			params[k] = append(params[k], vs...)
		}
		in, err := s.flow.Callback(context.Background(), "idp", params, oauth.Checks{State: state, CodeVerifier: verifier}, nil)
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
		if code := auth.CodeOf(err); code != auth.CodeOAuthCallback {
			t.Errorf("error %v: code %q, want %q", err, code, auth.CodeOAuthCallback)
		}
		if snap := s.store.Snapshot(); len(snap.Users)+len(snap.Sessions) != 0 {
			t.Fatalf("stored %+v", snap)
		}
	})
}
