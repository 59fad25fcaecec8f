package oauth_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/oauth"
)

// instance is one application instance serving the flow over HTTP:
// POST /auth/signin/idp begins, GET /auth/callback/idp completes and
// answers 200 with the user's id, or 403 with the error.
type instance struct {
	srv  *httptest.Server
	flow *oauth.Flow
	errs []error
}

func newInstance(t *testing.T, adapter any, fake *fakeProvider, p provider.Provider) *instance {
	t.Helper()
	in := &instance{}
	mux := http.NewServeMux()
	in.srv = httptest.NewServer(mux)
	t.Cleanup(in.srv.Close)
	a, err := auth.New(auth.Config{Adapter: adapter, Providers: []provider.Provider{p},
		Secrets: []string{"an-auth-secret-of-at-least-32-bytes!"}, BaseURL: testBase})
	if err != nil {
		t.Fatal(err)
	}
	// Every instance shares the cookie secret, as instances behind one
	// load balancer do.
	in.flow, err = oauth.New(oauth.Config{Auth: a, HTTPClient: fake.client})
	if err != nil {
		t.Fatal(err)
	}
	mux.HandleFunc("POST /auth/signin/idp", func(w http.ResponseWriter, r *http.Request) {
		to, err := in.flow.Begin(r.Context(), w, "idp")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
	})
	mux.HandleFunc("GET /auth/callback/idp", func(w http.ResponseWriter, r *http.Request) {
		si, err := in.flow.Callback(r.Context(), w, r, "idp", nil)
		if err != nil {
			in.errs = append(in.errs, err)
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, si.User.ID)
	})
	return in
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// begin signs in at the instance and returns the authorization URL and the
// check cookies the browser got.
func (in *instance) begin(t *testing.T) (string, []*http.Cookie) {
	t.Helper()
	res, err := noRedirects.Post(in.srv.URL+"/auth/signin/idp", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %s", res.Status)
	}
	return res.Header.Get("Location"), res.Cookies()
}

// callback sends the provider's redirect back (its path and query) to the
// instance with the cookies, and returns the status and body.
func (in *instance) callback(t *testing.T, back string, cookies []*http.Cookie) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, in.srv.URL+back, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
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
// redirect back with its code, and the victim's check cookies) against a
// provider that accepts a code twice (issue 23, item 8). The check values
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
			authURL, cookies := a.begin(t)
			back := fake.authorize(authURL)
			path := back.Path + "?" + back.RawQuery
			status, body := a.callback(t, path, cookies)
			if status != http.StatusOK {
				t.Fatalf("first callback: %d %s", status, body)
			}
			tokensBefore := fake.count("token")
			status, body = b.callback(t, path, cookies)
			if status == http.StatusOK {
				t.Fatalf("the replayed callback signed in again (user %s)", body)
			}
			if len(b.errs) != 1 || !errors.Is(b.errs[0], oauth.ErrCallbackReplayed) || !errors.Is(b.errs[0], core.ErrAlreadyExists) {
				t.Fatalf("replay refused with %v; want ErrCallbackReplayed", b.errs)
			}
			if fake.count("token") != tokensBefore {
				t.Error("the replayed code was exchanged; the refusal must come first")
			}
			if n := len(store.Snapshot().Sessions); n != 1 {
				t.Errorf("%d sessions after the replay, want the first callback's one", n)
			}
			// A fresh sign-in in the same browser still works.
			authURL, cookies = b.begin(t)
			back = fake.authorize(authURL)
			if status, body := b.callback(t, back.Path+"?"+back.RawQuery, cookies); status != http.StatusOK {
				t.Fatalf("a new sign-in after the refused replay: %d %s", status, body)
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
