package oauth_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
)

// instance is one application instance running the flow, as the
// handler would: it begins a sign-in, and completes a callback with the
// check values the browser brought back.
type instance struct {
	flow *oauth.Flow
	errs []error
}

func newInstance(t *testing.T, adapter any, fake *fakeProvider, p provider.Provider) *instance {
	t.Helper()
	a, err := auth.New(auth.Config{Adapter: adapter, Providers: []provider.Provider{p},
		Secrets: []string{"an-auth-secret-of-at-least-32-bytes!"}, BaseURL: testBase})
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{}
	in.flow, err = oauth.New(oauth.Config{Auth: a, HTTPClient: fake.client})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// begin signs in at the instance and returns the authorization URL and the
// check values the browser keeps (in the handler's check cookies).
func (in *instance) begin(t *testing.T) (string, oauth.Checks) {
	t.Helper()
	a, err := in.flow.Begin(context.Background(), "idp")
	if err != nil {
		t.Fatal(err)
	}
	return a.URL, a.Checks
}

// callback sends the provider's redirect back to the instance with the
// check values, and returns the signed-in user's id, or the error.
func (in *instance) callback(back *url.URL, checks oauth.Checks) (string, error) {
	si, err := in.flow.Callback(context.Background(), "idp", back.Query(), checks, nil)
	if err != nil {
		in.errs = append(in.errs, err)
		return "", err
	}
	return si.User.ID, nil
}

// tokenless is the memory adapter without the verification-token methods,
// so the flow keeps its single-use records in process.
type tokenless struct {
	core.UserCreator
	core.UserGetter
	core.UserByEmailGetter
	core.UserByAccountGetter
	core.UserUpdater
	core.AccountLinker
	core.SessionCreator
	core.SessionAndUserGetter
	core.SessionUpdater
	core.SessionDeleter
}

func newTokenless(m *memory.Adapter) tokenless {
	return tokenless{m, m, m, m, m, m, m, m, m, m}
}

// TestReplayedCallbackRefused replays a captured callback (the provider's
// redirect back with its code, and the victim's check values) against a
// provider that accepts a code twice. The check values
// are single-use on the server: the replay is refused before the code is
// exchanged, at the instance that saw the callback and at another one
// sharing the store, and with an adapter without verification tokens at
// the same instance.
func TestReplayedCallbackRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		checks []provider.Check
		shared bool // replay at a second instance sharing the store
		lax    bool // the adapter has no verification-token methods
	}{
		{name: "pkce_same_instance", checks: []provider.Check{provider.CheckPKCE}},
		{name: "pkce_other_instance", checks: []provider.Check{provider.CheckPKCE}, shared: true},
		{name: "all_checks_other_instance", checks: []provider.Check{provider.CheckPKCE, provider.CheckState, provider.CheckNonce}, shared: true},
		{name: "state_only_in_process", checks: []provider.Check{provider.CheckState}, lax: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeProvider(t)
			fake.reuseCodes = true
			store := memory.New()
			var adapter any = store
			if tc.lax {
				adapter = newTokenless(store)
			}
			p := oidcProvider(fake.URL(), tc.checks...)
			a := newInstance(t, adapter, fake, p)
			b := a
			if tc.shared {
				b = newInstance(t, adapter, fake, p)
			}
			authURL, checks := a.begin(t)
			back := fake.authorize(authURL)
			if _, err := a.callback(back, checks); err != nil {
				t.Fatalf("first callback: %v", err)
			}
			tokensBefore := fake.count("token")
			if user, err := b.callback(back, checks); err == nil {
				t.Fatalf("the replayed callback signed in again (user %s)", user)
			}
			if len(b.errs) != 1 || !errors.Is(b.errs[0], oauth.ErrCallbackReplayed) || !errors.Is(b.errs[0], core.ErrAlreadyExists) ||
				auth.CodeOf(b.errs[0]) != auth.CodeOAuthCallback {
				t.Fatalf("replay refused with %v; want ErrCallbackReplayed", b.errs)
			}
			if fake.count("token") != tokensBefore {
				t.Error("the replayed code was exchanged; the refusal must come first")
			}
			if n := len(store.Snapshot().Sessions); n != 1 {
				t.Errorf("%d sessions after the replay, want the first callback's one", n)
			}
			// A fresh sign-in in the same browser still works.
			authURL, checks = b.begin(t)
			back = fake.authorize(authURL)
			if _, err := b.callback(back, checks); err != nil {
				t.Fatalf("a new sign-in after the refused replay: %v", err)
			}
			if tc.lax && strings.Contains(strings.Join(identifiers(store), ","), auth.UseOnceIdentifierPrefix) {
				t.Error("a tokenless adapter got a verification token")
			}
		})
	}
}

func identifiers(m *memory.Adapter) []string {
	var ids []string
	for _, v := range m.Snapshot().VerificationTokens {
		ids = append(ids, v.Identifier)
	}
	return ids
}
