package oauthtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// loginPage is dex's password form as its template renders it.
const loginPage = `<!DOCTYPE html>
<html><head><title>dex</title>
<script>var s = "<form action='/evil'><input type=password name=x>";</script>
<style>form { color: red }</style></head>
<body>
<!-- <form action="/commented"><input type="password" name="c"></form> -->
<div class="theme-panel">
  <h2 class="theme-heading">Log in to Your Account</h2>
  <form method="post" action="/dex/auth/local/login?back=&amp;state=abc123">
    <input tabindex="1" required id="login" name="login" type="text" placeholder="email address" autofocus/>
    <input tabindex="2" required id="password" name=password type='password' class="theme-form-input"/>
    <input type="hidden" name="req" value="r&lt;1&gt;">
    <input type="checkbox" name="remember_me"/>
    <input type="checkbox" name="terms" checked>
    <button tabindex="4" id="submit-login" type="submit" class="dex-btn">Login</button>
  </form>
  %s
</div></body></html>`

const approvalPage = `<html><body>
<form method="post"><input type="hidden" name="req" value="r1"/><input type="hidden" name="approval" value="approve"><button type="submit">Grant Access</button></form>
<form method="post"><input type="hidden" name="req" value="r1"/><input type="hidden" name="approval" value="rejected"><button type="submit">Cancel</button></form>
</body></html>`

const connectorPage = `<html><body><h2>Log in to dex</h2>
<a href="/dex/auth/ldap?client_id=c&amp;state=s" class="dex-btn"><span>Log in with LDAP</span></a>
<a href="auth/local?client_id=c&amp;state=s" class="dex-btn"><span class="dex-btn-text">Log in with Email</span></a>
</body></html>`

func TestParsePage(t *testing.T) {
	p := parsePage([]byte(fmt.Sprintf(loginPage, "")))
	if len(p.forms) != 1 {
		t.Fatalf("forms = %+v, want only the one outside script and comment", p.forms)
	}
	f, ok := p.passwordForm()
	if !ok || f.action != "/dex/auth/local/login?back=&state=abc123" || f.method != http.MethodPost {
		t.Fatalf("passwordForm = %+v, %v", f, ok)
	}
	want := []htmlInput{
		{name: "login", typ: "text"},
		{name: "password", typ: "password"},
		{name: "req", typ: "hidden", value: "r<1>"},
		{name: "remember_me", typ: "checkbox"},
		{name: "terms", typ: "checkbox", checked: true},
	}
	if fmt.Sprint(f.inputs) != fmt.Sprint(want) {
		t.Errorf("inputs = %+v,\nwant %+v", f.inputs, want)
	}
	if _, ok := p.approvalForm(); ok {
		t.Error("the login page has no approval form")
	}

	a, ok := parsePage([]byte(approvalPage)).approvalForm()
	if !ok || len(a.inputs) != 2 || a.inputs[1].value != "approve" {
		t.Errorf("approvalForm = %+v, %v; want the approving form", a, ok)
	}

	cp := parsePage([]byte(connectorPage))
	base, _ := url.Parse("http://127.0.0.1:5556/dex/auth?client_id=c")
	link, ok := cp.passwordConnector(base)
	if !ok || link.String() != "http://127.0.0.1:5556/dex/auth/local?client_id=c&state=s" || cp.links[1].text != "Log in with Email" {
		t.Errorf("passwordConnector = %q, %v; links %+v", link, ok, cp.links)
	}
	if _, ok := cp.passwordForm(); ok {
		t.Error("the connector page has no password form")
	}

	if got := visibleText([]byte(fmt.Sprintf(loginPage, `<div class="dex-error-box">Invalid Email &amp; password.</div>`))); !strings.Contains(got, "Log in to Your Account Login Invalid Email & password.") || strings.Contains(got, "evil") || strings.Contains(got, "color") {
		t.Errorf("visibleText = %q", got)
	}
}

// TestTokenizeOddInput checks that malformed HTML neither panics nor loops.
func TestTokenizeOddInput(t *testing.T) {
	for _, in := range []string{
		"", "<", "<<", "</", "</>", "<a", "<a href", "<a href=", `<a href="x`, "<a href='x' b=c", "<!--", "<!doctype",
		"<script>never closed", "<form><input name=a type=password", "a < b > c", "<1>", "<a =x>", "<a\x00b>",
		"<input name=\"a\" name=\"b\" type=password>", strings.Repeat("<div>", 1000),
	} {
		toks := tokenize([]byte(in))
		_ = parsePage([]byte(in))
		_ = visibleText([]byte(in))
		if len(toks) > len(in)+1 {
			t.Errorf("%q: %d tokens", in, len(toks))
		}
	}
	if got := tokenize([]byte(`<input name="a" name="b">`)); got[0].attrs["name"] != "a" {
		t.Errorf("duplicate attribute: got %q, want the first", got[0].attrs["name"])
	}
}

func TestPageText(t *testing.T) {
	long := "<p>" + strings.Repeat("é", 300) + "</p>"
	got := pageText([]byte(long))
	if !strings.HasSuffix(got, `…"`) || len(got) > 420 || !strings.HasPrefix(got, `"é`) {
		t.Errorf("pageText of a long page = %q", got)
	}
	if got := pageText(nil); got != "(empty page)" {
		t.Errorf("pageText(nil) = %q", got)
	}
}

// fakeDex serves pages shaped like dex's for the cases a real dex, as
// oauthtest.Dex configures it, does not show: a connector list, an approval
// screen, broken pages.
func fakeDex(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /dex/auth", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, connectorPage)
	})
	mux.HandleFunc("GET /dex/auth/local", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("state") != "s" {
			http.Error(w, "lost the query", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, "/dex/auth/local/login?state=abc123", http.StatusFound)
	})
	mux.HandleFunc("GET /dex/auth/local/login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "dex_session", Value: "k", Path: "/dex"})
		fmt.Fprintf(w, loginPage, "")
	})
	mux.HandleFunc("POST /dex/auth/local/login", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f := r.PostForm
		if c, err := r.Cookie("dex_session"); err != nil || c.Value != "k" {
			http.Error(w, "no session cookie", http.StatusBadRequest)
			return
		}
		if r.URL.Query().Get("state") != "abc123" || f.Get("req") != "r<1>" || f.Has("remember_me") || f.Get("terms") != "on" {
			http.Error(w, "form not filled as a browser would: "+f.Encode(), http.StatusBadRequest)
			return
		}
		if f.Get("login") != "alice@example.com" || f.Get("password") != "pw" {
			fmt.Fprintf(w, loginPage, `<div id="login-error" class="dex-error-box">Invalid Email Address and password.</div>`)
			return
		}
		http.Redirect(w, r, "/dex/approval?req=r1", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /dex/approval", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, approvalPage)
	})
	mux.HandleFunc("POST /dex/approval", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("approval") != "approve" || r.FormValue("req") != "r1" || r.URL.Query().Get("req") != "r1" {
			http.Error(w, "not approved", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, "http://127.0.0.1:3000/cb?code=the-code&state=xyz", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /dex/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/dex/loop", http.StatusFound)
	})
	mux.HandleFunc("GET /dex/blank", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body><h1>Nothing to see</h1></body></html>")
	})
	mux.HandleFunc("GET /dex/broken", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Internal Server Error: storage is down", http.StatusInternalServerError)
	})
	mux.HandleFunc("GET /dex/badlocation", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://[::1%zz/")
		w.WriteHeader(http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestLoginPages(t *testing.T) {
	srv := fakeDex(t)
	d := &DexServer{Issuer: srv.URL + "/dex"}
	ctx := context.Background()

	got, err := d.Login(ctx, srv.URL+"/dex/auth?client_id=c", "alice@example.com", "pw")
	if err != nil {
		t.Fatalf("Login through connector list, form and approval: %v", err)
	}
	if got.String() != "http://127.0.0.1:3000/cb?code=the-code&state=xyz" {
		t.Errorf("Login = %s", got)
	}

	for _, tt := range []struct {
		name, path, password string
		rejected             bool
		wantInErr            string
	}{
		{"wrong password", "/dex/auth", "nope", true, "Invalid Email Address and password."},
		{"redirect loop", "/dex/loop", "pw", false, "redirects"},
		{"page without a form", "/dex/blank", "pw", false, "Nothing to see"},
		{"server error", "/dex/broken", "pw", false, "500 Internal Server Error"},
		{"bad redirect", "/dex/badlocation", "pw", false, "/dex/badlocation"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.Login(ctx, srv.URL+tt.path, "alice@example.com", tt.password)
			if got != nil || !errors.Is(err, ErrDexLogin) || errors.Is(err, ErrDexLoginRejected) != tt.rejected ||
				!strings.Contains(err.Error(), tt.wantInErr) {
				t.Fatalf("Login = %v, %v; want ErrDexLogin (rejected: %v) containing %q", got, err, tt.rejected, tt.wantInErr)
			}
		})
	}

	for _, bad := range []string{"://nope", "https://" + strings.TrimPrefix(srv.URL, "http://") + "/dex/auth", srv.URL + "/dexter/auth", srv.URL + "/auth"} {
		if _, err := d.Login(ctx, bad, "a", "b"); !errors.Is(err, ErrDexLogin) {
			t.Errorf("Login(%q) = %v, want ErrDexLogin", bad, err)
		}
	}
	var nilServer *DexServer
	if _, err := nilServer.Login(ctx, srv.URL+"/dex/auth", "a", "b"); !errors.Is(err, ErrDexLogin) {
		t.Errorf("Login on a nil server = %v, want ErrDexLogin", err)
	}
}
