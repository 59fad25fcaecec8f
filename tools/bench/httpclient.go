package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The client of the HTTP rows: its requests, answers and the checks of
// what the servers answer (a session, an e-mail sign-in).

// client is the one HTTP client of both sides: keep-alive connections,
// redirects not followed, cookies sent by hand.
func newClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 64, DisableCompression: true,
			IdleConnTimeout: time.Minute},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// answer is a read response.
type answer struct {
	status  int
	header  http.Header
	body    []byte
	cookies []*http.Cookie
}

func do(ctx context.Context, c *http.Client, method, u, cookie string, form url.Values) (*answer, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &answer{status: res.StatusCode, header: res.Header, body: b, cookies: res.Cookies()}, nil
}

func (a *answer) cookie(name string) *http.Cookie {
	for _, c := range a.cookies {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// sessionJSON is the body of GET /auth/session.
type sessionJSON struct {
	User *struct {
		Name  *string `json:"name"`
		Email *string `json:"email"`
		Image *string `json:"image"`
	} `json:"user"`
	Expires string `json:"expires"`
}

// checkSession checks a GET /auth/session answer for user k: 200, JSON,
// the user's name and e-mail, an expiry after minExpires.
func checkSession(a *answer, k int, minExpires time.Time) error {
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		return fmt.Errorf("GET /session: %d %s %q", a.status, a.header.Get("Content-Type"), a.body)
	}
	var s sessionJSON
	if err := json.Unmarshal(a.body, &s); err != nil || s.User == nil {
		return fmt.Errorf("GET /session: body %q (%v), want a session", a.body, err)
	}
	want := userID(k) + "@bench.example"
	if s.User.Email == nil || *s.User.Email != want || s.User.Name == nil || *s.User.Name != "Ada Lovelace" {
		return fmt.Errorf("GET /session: body %q, want user %s", a.body, want)
	}
	exp, err := time.Parse(time.RFC3339Nano, s.Expires)
	if err != nil || !exp.After(minExpires) {
		return fmt.Errorf("GET /session: expires %q (%v), want after %s", s.Expires, err, minExpires.Format(time.RFC3339))
	}
	return nil
}

// emailSignIn makes an e-mail sign-in for user k against origin: GET
// /auth/csrf (token and cookie), POST /auth/signin/email, the link from
// /bench/link, GET the link. It returns the new session cookie's value.
func emailSignIn(ctx context.Context, c *http.Client, origin string, k int) (string, error) {
	csrf, err := do(ctx, c, "GET", origin+"/auth/csrf", "", nil)
	if err != nil {
		return "", err
	}
	var tok struct {
		CSRFToken string `json:"csrfToken"`
	}
	cc := csrf.cookie("authjs.csrf-token")
	if csrf.status != http.StatusOK || json.Unmarshal(csrf.body, &tok) != nil || len(tok.CSRFToken) != 64 || cc == nil {
		return "", fmt.Errorf("GET /csrf: %d %q, cookie %v", csrf.status, csrf.body, cc)
	}
	email := userID(k) + "@bench.example"
	signin, err := do(ctx, c, "POST", origin+"/auth/signin/email", cc.Name+"="+cc.Value,
		url.Values{"csrfToken": {tok.CSRFToken}, "email": {email}, "callbackUrl": {origin + "/"}})
	if err != nil {
		return "", err
	}
	if (signin.status != http.StatusFound && signin.status != http.StatusSeeOther) || !strings.Contains(signin.header.Get("Location"), "/auth/verify-request") {
		return "", fmt.Errorf("POST /signin/email: %d Location %q %q", signin.status, signin.header.Get("Location"), signin.body)
	}
	link, err := do(ctx, c, "GET", origin+"/bench/link?email="+url.QueryEscape(email), "", nil)
	if err != nil {
		return "", err
	}
	if link.status != http.StatusOK || !strings.HasPrefix(string(link.body), origin+"/auth/callback/email?") {
		return "", fmt.Errorf("no sign-in link for %s: %d %q", email, link.status, link.body)
	}
	cb, err := do(ctx, c, "GET", string(link.body), "", nil)
	if err != nil {
		return "", err
	}
	sc := cb.cookie(sessionCookie)
	if cb.status != http.StatusFound || cb.header.Get("Location") != origin+"/" || sc == nil || sc.Value == "" {
		return "", fmt.Errorf("GET the link: %d Location %q, session cookie %v, %q", cb.status, cb.header.Get("Location"), sc, cb.body)
	}
	return sc.Value, nil
}
