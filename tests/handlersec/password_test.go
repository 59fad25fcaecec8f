package handlersec

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// pwApp is a handler with a password provider on one store, and a browser.
type pwApp struct {
	t      *testing.T
	srv    *httptest.Server
	client *http.Client
	a      *auth.Auth // waited for before reading the mails (forgot sends in the background)
	mu     sync.Mutex
	mails  []provider.VerificationRequest
}

func (app *pwApp) send(_ context.Context, r provider.VerificationRequest) error {
	app.mu.Lock()
	defer app.mu.Unlock()
	app.mails = append(app.mails, r)
	return nil
}

// mail is the last e-mail of the purpose to the address.
func (app *pwApp) mail(to string, purpose provider.Purpose) provider.VerificationRequest {
	app.t.Helper()
	if app.a != nil {
		app.a.Wait()
	}
	app.mu.Lock()
	defer app.mu.Unlock()
	for i := len(app.mails) - 1; i >= 0; i-- {
		if m := app.mails[i]; m.Identifier == to && m.Purpose == purpose {
			return m
		}
	}
	app.t.Fatalf("no %q e-mail to %s", purpose, to)
	return provider.VerificationRequest{}
}

// newBrowser gives the app a browser of its own (a new cookie jar) that
// does not follow redirects.
func (app *pwApp) newBrowser() {
	jar, _ := cookiejar.New(nil)
	app.client = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// csrf is the browser's CSRF token.
func (app *pwApp) csrf() string {
	app.t.Helper()
	res, err := app.client.Get(app.srv.URL + "/auth/csrf")
	if err != nil {
		app.t.Fatal(err)
	}
	var body struct{ CSRFToken string }
	if err := decodeJSON(res, &body); err != nil {
		app.t.Fatal(err)
	}
	return body.CSRFToken
}

// answer is a response's status, Location and body.
type answer struct {
	status         int
	location, body string
}

func (app *pwApp) read(res *http.Response, err error) answer {
	app.t.Helper()
	if err != nil {
		app.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, res.Header.Get("Location"), string(b)}
}

// postJSON posts fields as JSON (with the browser's CSRF token).
func (app *pwApp) postJSON(path string, fields map[string]string) answer {
	app.t.Helper()
	fields["csrfToken"] = app.csrf()
	b, _ := json.Marshal(fields)
	return app.read(app.client.Post(app.srv.URL+path, "application/json", bytes.NewReader(b)))
}

// postForm posts fields as a browser form (with the CSRF token).
func (app *pwApp) postForm(path string, fields map[string]string) answer {
	app.t.Helper()
	v := url.Values{"csrfToken": {app.csrf()}}
	for k, f := range fields {
		v.Set(k, f)
	}
	return app.read(app.client.PostForm(app.srv.URL+path, v))
}

// session is the browser's GET /auth/session user's address ("" when
// signed out).
func (app *pwApp) session() string {
	app.t.Helper()
	res, err := app.client.Get(app.srv.URL + "/auth/session")
	if err != nil {
		app.t.Fatal(err)
	}
	var s *struct {
		User struct {
			Email string `json:"email"`
		} `json:"user"`
	}
	if err := decodeJSON(res, &s); err != nil {
		app.t.Fatal(err)
	}
	if s == nil {
		return ""
	}
	return s.User.Email
}

// TestPasswordRoutes runs password sign-up, verification, sign-in, reset
// and change through the handler's routes on each real store, with
// database and JWT sessions, and checks that the answers that must not
// tell addresses apart are the same bytes.
func TestPasswordRoutes(t *testing.T) {
	for _, st := range testStores {
		for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
			t.Run(st.name+"/"+string(strategy), func(t *testing.T) {
				store := st.open(t)
				caps := core.Probe(store)
				for _, x := range []core.Extension{core.ExtensionSwapPasswordHash, core.ExtensionDeleteSessionsByUserID} {
					if !caps.HasExtension(x) {
						t.Skipf("%s does not implement %s", caps.Adapter(), x)
					}
				}
				app := &pwApp{t: t, srv: httptest.NewServer(nil)}
				t.Cleanup(app.srv.Close)
				hasher, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
				if err != nil {
					t.Fatal(err)
				}
				pc := provider.Password("auth@example.com", app.send)
				pc.Codes, pc.Hasher = true, hasher
				a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{secret}, BaseURL: app.srv.URL + "/auth",
					Session: auth.SessionOptions{Strategy: strategy}, Providers: []provider.Provider{pc}})
				if err != nil {
					t.Fatal(err)
				}
				app.a = a
				h, err := handler.New(handler.Config{Auth: a, RateLimit: handler.RateLimit{Disabled: true}})
				if err != nil {
					t.Fatal(err)
				}
				mux := http.NewServeMux()
				mux.Handle("/auth/", h)
				app.srv.Config.Handler = mux
				app.newBrowser()
				ctx := context.Background()
				suffix := randomName(t)
				owner := core.User{ID: core.NewUUID(), Email: "owner-" + suffix + "@example.com"}
				if _, err := store.CreateUser(ctx, owner); err != nil {
					t.Fatal(err)
				}
				const pw, pw2 = "correct horse battery", "staple the horse again"
				newAddr := "new-" + suffix + "@example.com"

				// Sign-up: a taken address answers like a new one, JSON and form.
				taken := app.postJSON("/auth/password/signup", map[string]string{"email": owner.Email, "password": pw})
				fresh := app.postJSON("/auth/password/signup", map[string]string{"email": newAddr, "password": pw})
				if taken != fresh || fresh.status != http.StatusOK {
					t.Errorf("sign-up answers: taken %+v, new %+v; want the same 200", taken, fresh)
				}
				takenForm := app.postForm("/auth/password/signup", map[string]string{"email": owner.Email, "password": pw})
				freshForm := app.postForm("/auth/password/signup", map[string]string{"email": "other-" + newAddr, "password": pw})
				if takenForm != freshForm || freshForm.status != http.StatusSeeOther {
					t.Errorf("sign-up form answers: taken %+v, new %+v; want the same redirect", takenForm, freshForm)
				}
				app.mail(owner.Email, provider.PurposeAccountExists)
				if app.session() != "" {
					t.Error("a sign-up signed in before verification")
				}

				// The verification link opens a confirmation page and
				// verifies nothing; its post verifies in the browser that
				// signed up, or elsewhere with the password.
				m := app.mail(newAddr, provider.PurposeVerifyEmail)
				res := app.read(app.client.Head(m.URL))
				if res.status != http.StatusMethodNotAllowed {
					t.Errorf("HEAD of the verification link: %d; want 405 (a link checker must not use it)", res.status)
				}
				link, err := url.Parse(m.URL)
				if err != nil {
					t.Fatal(err)
				}
				confirm := func(password string) map[string]string {
					return map[string]string{"email": link.Query().Get("email"), "token": link.Query().Get("token"), "password": password}
				}
				signUpBrowser := app.client
				app.newBrowser() // a mail scanner, or whoever else got the link
				res = app.read(app.client.Get(m.URL))
				if res.status != http.StatusOK || app.session() != "" {
					t.Errorf("GET of the verification link in another browser: %+v, session %q; want the confirmation page and no session", res, app.session())
				}
				for _, pass := range []string{"", pw2} {
					if res := app.postJSON("/auth/password/verify", confirm(pass)); res.status/100 != 4 || app.session() != "" {
						t.Errorf("the link posted from another browser with password %q: %+v; want a refusal and no session", pass, res)
					}
				}
				app.client = signUpBrowser
				res = app.postForm("/auth/password/verify", confirm(""))
				if res.status != http.StatusSeeOther || res.location != app.srv.URL+"/" {
					t.Errorf("the link confirmed in the sign-up's browser: %+v; want a redirect to the site", res)
				}
				userID := app.session()
				if userID != newAddr {
					t.Fatal("the verification link confirmed in the sign-up's browser did not sign in")
				}

				// Sign-in: a wrong password and an unknown address answer alike.
				app.newBrowser()
				wrong := app.postJSON("/auth/password/signin", map[string]string{"email": newAddr, "password": pw2})
				unknown := app.postJSON("/auth/password/signin", map[string]string{"email": "nobody-" + newAddr, "password": pw2})
				if wrong != unknown || wrong.status != http.StatusUnauthorized {
					t.Errorf("sign-in answers: wrong password %+v, unknown address %+v; want the same 401", wrong, unknown)
				}
				evil := app.postForm("/auth/password/signin", map[string]string{"email": newAddr, "password": pw, "callbackUrl": "https://evil.example/x"})
				if (evil.status != http.StatusFound && evil.status != http.StatusSeeOther) || evil.location != app.srv.URL+"/" {
					t.Errorf("sign-in with a foreign callbackUrl: %+v; want a redirect to the site", evil)
				}
				if app.session() != userID {
					t.Fatal("the form sign-in did not sign in")
				}
				other := app.client

				// Forgot: the same answer for every address; reset by code in this browser.
				app.newBrowser()
				known := app.postJSON("/auth/password/forgot", map[string]string{"email": newAddr})
				nobody := app.postJSON("/auth/password/forgot", map[string]string{"email": "nobody-" + newAddr})
				if known != nobody || known.status != http.StatusOK {
					t.Errorf("forgot answers: known %+v, unknown %+v; want the same 200", known, nobody)
				}
				reset := app.mail(newAddr, provider.PurposeResetPassword)
				if res := app.read(app.client.Get(reset.URL)); res.status != http.StatusOK || !strings.Contains(res.body, `name="token"`) {
					t.Errorf("reset link: %d; want the reset form", res.status)
				}
				short := app.postJSON("/auth/password/reset", map[string]string{"email": newAddr, "code": reset.Code, "password": "short"})
				if short.status != http.StatusBadRequest || strings.Contains(short.body, "short\"") {
					t.Errorf("reset with a too short password: %+v; want 400 without the password", short)
				}
				if res := app.postJSON("/auth/password/reset", map[string]string{"email": newAddr, "code": reset.Code, "password": pw2}); res.status != http.StatusOK {
					t.Fatalf("reset by code: %+v", res)
				}
				if res := app.postJSON("/auth/password/reset", map[string]string{"email": newAddr, "code": reset.Code, "password": pw}); res.status != http.StatusForbidden {
					t.Errorf("a second reset with the code: %+v; want 403 Verification", res)
				}
				if strategy == auth.StrategyDatabase {
					app.client = other
					if app.session() != "" {
						t.Error("the reset left another browser's session")
					}
				}

				// Sign-in with the new password, then change it: the other sessions end.
				app.newBrowser()
				if res := app.postJSON("/auth/password/signin", map[string]string{"email": newAddr, "password": pw2}); res.status != http.StatusOK || !strings.Contains(res.body, `"url"`) {
					t.Fatalf("sign-in with the new password: %+v", res)
				}
				first := app.client
				app.newBrowser()
				// The callback route redirects, as every callback does.
				if res := app.postJSON("/auth/callback/password", map[string]string{"email": newAddr, "password": pw2}); res.status != http.StatusSeeOther || app.session() != userID {
					t.Fatalf("sign-in through /callback/password: %+v", res)
				}
				if res := app.postJSON("/auth/password/change", map[string]string{"currentPassword": pw2, "password": pw}); res.status != http.StatusOK {
					t.Fatalf("change: %+v", res)
				}
				if app.session() != userID {
					t.Error("the change ended the changing session")
				}
				if strategy == auth.StrategyDatabase {
					app.client = first
					if app.session() != "" {
						t.Error("the change left the other session")
					}
				}
				app.newBrowser()
				if res := app.read(app.client.Post(app.srv.URL+"/auth/password/signin", "application/json", strings.NewReader(`{"email":"`+newAddr+`","password":"`+pw+`"}`))); res.status != http.StatusForbidden {
					t.Errorf("a sign-in without its CSRF token: %+v; want 403", res)
				}
			})
		}
	}
}
