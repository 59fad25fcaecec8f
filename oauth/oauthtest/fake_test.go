package oauthtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The fake checks what a PKCE authorization-code client sends, and answers
// the profile last set.
func TestFake(t *testing.T) {
	f := StartFake(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	status := func(res *http.Response, err error) int {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	authorize := f.URL + "/authorize?" + url.Values{"response_type": {"code"}, "redirect_uri": {"http://app.example/cb"}, "state": {"s1"}}.Encode()
	if got := status(noRedirect.Get(authorize)); got != http.StatusBadRequest {
		t.Errorf("authorization without a code_challenge: %d, want 400", got)
	}
	res, err := noRedirect.Get(authorize + "&code_challenge=abc")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	back, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound || back.Host != "app.example" || back.Query().Get("state") != "s1" || back.Query().Get("code") == "" {
		t.Fatalf("authorization: %d to %q, want 302 to the redirect_uri with a code and the state", res.StatusCode, res.Header.Get("Location"))
	}
	if got := status(http.PostForm(f.URL+"/token", url.Values{"code": {back.Query().Get("code")}})); got != http.StatusBadRequest {
		t.Errorf("token request without a code_verifier: %d, want 400", got)
	}
	res, err = http.PostForm(f.URL+"/token", url.Values{"code": {back.Query().Get("code")}, "code_verifier": {"v"}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(res.Body).Decode(&tok)
	_ = res.Body.Close()
	if err != nil || !strings.HasPrefix(tok.AccessToken, "at-") {
		t.Fatalf("token response: %+v, %v", tok, err)
	}
	if got := status(http.Get(f.URL + "/userinfo")); got != http.StatusUnauthorized {
		t.Errorf("userinfo without a token: %d, want 401", got)
	}
	f.SetProfile(map[string]any{"id": "u-1", "email": "Ada@Example.com"})
	req, _ := http.NewRequest(http.MethodGet, f.URL+"/userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var profile map[string]any
	err = json.NewDecoder(res.Body).Decode(&profile)
	_ = res.Body.Close()
	if err != nil || profile["id"] != "u-1" || profile["email"] != "Ada@Example.com" {
		t.Errorf("userinfo: %v, %v; want the profile set", profile, err)
	}
	p := f.Provider("one")
	if p.ID != "one" || p.Authorization.URL != f.URL+"/authorize" || p.Token.URL != f.URL+"/token" || p.Userinfo.URL != f.URL+"/userinfo" {
		t.Errorf("provider %+v: want the fake's endpoints", p)
	}
}
