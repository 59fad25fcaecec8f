package providers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/authport/authport/core/provider"
)

// TestUserinfoHandlersFailures runs the built-ins' own userinfo handlers
// against an httptest server that fails: each returns an error that does
// not carry the access token (which some of them put in the URL).
func TestUserinfoHandlersFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	const token = "secret-access-token"
	tokens := provider.TokenSet{AccessToken: token, Extra: map[string]any{"user_id": "ada"}}
	// Built with the test server as their issuer (Nextcloud's API is
	// under it), each runs its own handler: FetchUserinfo reports ok.
	for _, id := range []string{"bitbucket", "dropbox", "foursquare", "hubspot", "mailchimp", "mailru", "nextcloud", "trakt", "vk", "yandex", "zoho"} {
		p := BuiltIns()[id](UserConfig{ClientID: "c", ClientSecret: "s", Issuer: srv.URL}).(provider.OAuthProvider)
		_, ok, err := p.FetchUserinfo(context.Background(), provider.UserinfoRequest{Endpoint: provider.Endpoint{URL: srv.URL + "/userinfo"}, Tokens: tokens, Client: srv.Client()})
		if !ok || err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("%s: ok %v, %v, want its handler's 401", id, ok, err)
		}
		if err != nil && strings.Contains(err.Error(), token) {
			t.Errorf("%s: the error shows the access token: %v", id, err)
		}
	}

	// A canceled request fails with the context's error, token-free.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Foursquare("c", "s").Userinfo.Request(ctx, provider.UserinfoRequest{Endpoint: provider.Endpoint{URL: srv.URL}, Tokens: tokens, Client: srv.Client()})
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), token) {
		t.Errorf("canceled: %v", err)
	}
	// Nextcloud needs the token response's user_id.
	_, err = Nextcloud("c", "s", srv.URL).Userinfo.Request(context.Background(),
		provider.UserinfoRequest{Endpoint: provider.Endpoint{URL: srv.URL}, Tokens: provider.TokenSet{AccessToken: token}, Client: srv.Client()})
	if err == nil || !strings.Contains(err.Error(), "user_id") {
		t.Errorf("nextcloud without user_id: %v", err)
	}
}

// TestBitbucketEmails: without the email scope the e-mail list fails and
// the profile is kept without an address; unconfirmed addresses are never
// taken.
func TestBitbucketEmails(t *testing.T) {
	var emails string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer at" {
			w.WriteHeader(401)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/emails") {
			if emails == "" {
				w.WriteHeader(403)
				return
			}
			_, _ = w.Write([]byte(emails))
			return
		}
		_, _ = w.Write([]byte(`{"account_id":"a1","display_name":"Ada"}`))
	}))
	defer srv.Close()
	req := provider.UserinfoRequest{Endpoint: provider.Endpoint{URL: srv.URL + "/2.0/user"}, Tokens: provider.TokenSet{AccessToken: "at"}, Client: srv.Client()}
	for _, tc := range []struct{ emails, want string }{
		{"", ""},
		{`{"values":[{"email":"u@x.y","is_primary":true,"is_confirmed":false}]}`, ""},
		{`{"values":[{"email":"c@x.y","is_primary":false,"is_confirmed":true},{"email":"p@x.y","is_primary":true,"is_confirmed":true}]}`, "p@x.y"},
		{`{"values":[{"email":"c@x.y","is_primary":false,"is_confirmed":true}]}`, "c@x.y"},
	} {
		emails = tc.emails
		p, err := bitbucketUserinfo(context.Background(), req)
		if err != nil || p.AccountID != "a1" || p.Email != tc.want {
			t.Errorf("emails %s: %+v %v, want %q", tc.emails, p, err, tc.want)
		}
	}
}

// TestUserinfoHandlersRequests checks the request each built-in's own
// userinfo handler makes (method, where the token goes, extra headers and
// parameters) and that the response decodes as the profile.
func TestUserinfoHandlersRequests(t *testing.T) {
	var got, body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Method + " " + r.URL.RawQuery + " " + r.Header.Get("Authorization") + " " + r.Header.Get("trakt-api-version") + r.Header.Get("trakt-api-key")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		id, want string
	}{
		{"dropbox", "POST  Bearer tok "},
		{"foursquare", "GET oauth_token=tok&v=20230131  "},
		{"mailru", "GET access_token=tok  "},
		{"trakt", "GET extended=full Bearer tok 2c"},
		{"mailchimp", "GET  OAuth tok "},
		{"yandex", "GET format=json OAuth tok "},
		{"zoho", "GET  Zoho-oauthtoken tok "},
	} {
		p := BuiltIns()[tc.id](UserConfig{ClientID: "c", ClientSecret: "s"}).(provider.OAuthProvider)
		o := p.Options()
		endpoint := o.Userinfo
		endpoint.URL = srv.URL
		// A body the profile types decode, each finding its id.
		got, body = "", `{"account_id":"d1","id":"m1","ZUID":7,"response":{"user":{"id":"f1"}},"ids":{"slug":"t1"},"login":{"login_id":5}}`
		if tc.id == "yandex" {
			body = `{"id":"y1"}`
		}
		u, ok, err := p.FetchUserinfo(context.Background(), provider.UserinfoRequest{Endpoint: endpoint, Tokens: provider.TokenSet{AccessToken: "tok"}, Client: srv.Client()})
		if !ok || err != nil || u.ID == "" || got != tc.want {
			t.Errorf("%s: request %q, ok %v, %v, user %+v; want the request %q and a user", tc.id, got, ok, err, u, tc.want)
		}
	}
}
