package oauthtest

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/authport/authport/core/provider"
)

// Fake is an OAuth 2.0 provider in process, for what dex cannot be made to
// send: a profile with email_verified false, an address with spaces and
// capitals, or any profile a test sets with [Fake.SetProfile]. It
// authorises at once (no login page): its authorization endpoint redirects
// straight back to the client with a code, after checking that the request
// is a PKCE authorization-code request. Start one with [StartFake].
type Fake struct {
	// URL is the base URL of the fake's server, e.g. http://127.0.0.1:41234;
	// its endpoints are URL+"/authorize", URL+"/token" and URL+"/userinfo".
	URL string

	mu      sync.Mutex
	profile map[string]any
}

// StartFake starts a [Fake] for t, stopped when t ends. Its userinfo
// endpoint answers with an empty profile until [Fake.SetProfile].
func StartFake(t testing.TB) *Fake {
	t.Helper()
	f := &Fake{}
	mux := http.NewServeMux()
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		to, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || q.Get("response_type") != "code" || q.Get("code_challenge") == "" {
			http.Error(w, "bad authorization request: want response_type=code, a code_challenge and a redirect_uri", http.StatusBadRequest)
			return
		}
		to.RawQuery = url.Values{"code": {"code-" + rand.Text()}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.PostFormValue("code") == "" || r.PostFormValue("code_verifier") == "" {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at-" + rand.Text(), "token_type": "Bearer", "expires_in": 3600})
	})
	mux.HandleFunc("/userinfo", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer at-") {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		p := f.profile
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(p)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// SetProfile sets the profile the userinfo endpoint answers with from now
// on (nil answers JSON null).
func (f *Fake) SetProfile(profile map[string]any) {
	f.mu.Lock()
	f.profile = profile
	f.mu.Unlock()
}

// Provider returns an OAuth 2.0 provider with the id (and the name "Fake
// "+id) whose endpoints are the fake's. Several providers of one fake share
// its profile.
func (f *Fake) Provider(id string) *provider.OAuth2Config[map[string]any] {
	p := &provider.OAuth2Config[map[string]any]{}
	p.ID, p.Name = id, "Fake "+id
	p.Authorization = provider.Endpoint{URL: f.URL + "/authorize"}
	p.Token = provider.TokenEndpoint{URL: f.URL + "/token"}
	p.Userinfo = provider.UserinfoEndpoint[map[string]any]{URL: f.URL + "/userinfo"}
	p.ClientID, p.ClientSecret = "client", "client-secret-0123456789abcdef0123456789"
	return p
}
