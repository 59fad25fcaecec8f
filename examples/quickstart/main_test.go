package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestQuickstart builds the README's quickstart program and runs it as a
// user would: it asks for an e-mail sign-in link (with PORT set and no
// AUTH_URL, the link and redirects must use PORT), restarts the program
// with the secret rotated (AUTH_SECRET="new,old") and AUTH_URL set, follows the link,
// reads the session from /auth/session and the protected page, and checks
// that the GitHub button starts GitHub's flow with AUTH_GITHUB_ID.
func TestQuickstart(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "quickstart")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir() // auth.db goes here
	port := freePort(t)
	site := "http://localhost:" + port
	oldSecret := "old-secret-0123456789-0123456789-0123456789"
	newSecret := "new-secret-0123456789-0123456789-0123456789"

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// Without AUTH_URL, the site's origin follows PORT.
	p := start(t, bin, dir, port, oldSecret)
	res := get(t, c, site+"/", "text/html")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), site+"/auth/signin") {
		t.Fatalf("GET / signed out: %d Location %q; want 303 to %s/auth/signin", res.StatusCode, res.Header.Get("Location"), site)
	}
	csrf := csrfToken(t, c, site)
	res = post(t, c, site+"/auth/signin/email", url.Values{"email": {"ada@example.com"}, "csrfToken": {csrf}})
	if !strings.Contains(res.Header.Get("Location"), "/auth/verify-request") {
		t.Fatalf("POST /auth/signin/email: %d Location %q; want the verify-request page", res.StatusCode, res.Header.Get("Location"))
	}
	link := p.link(t, "ada@example.com")
	if !strings.HasPrefix(link, site+"/auth/callback/email?") {
		t.Fatalf("sign-in link %q; want one to %s/auth/callback/email", link, site)
	}
	p.stop(t)

	// The link was made with the old secret; the new list still accepts it.
	p = start(t, bin, dir, port, newSecret+","+oldSecret,
		"AUTH_URL="+site) // origin only: the routes go to /auth
	defer p.stop(t)
	res = get(t, c, link, "text/html")
	if res.StatusCode/100 != 3 || strings.Contains(res.Header.Get("Location"), "error") {
		t.Fatalf("following the link: %d Location %q; want a redirect into the site", res.StatusCode, res.Header.Get("Location"))
	}
	res = get(t, c, site+"/auth/session", "application/json")
	var s struct {
		User struct{ Email string } `json:"user"`
	}
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil || s.User.Email != "ada@example.com" {
		t.Fatalf("/auth/session after signing in: %+v, %v; want ada@example.com", s, err)
	}
	res = get(t, c, site+"/", "text/html")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"email":"ada@example.com"`) {
		t.Fatalf("GET / signed in: %d %q; want 200 with the session", res.StatusCode, body)
	}
	if _, err := os.Stat(filepath.Join(dir, "auth.db")); err != nil {
		t.Errorf("no bbolt file: %v", err)
	}

	res = post(t, c, site+"/auth/signin/github", url.Values{"csrfToken": {csrfToken(t, c, site)}})
	to, _ := url.Parse(res.Header.Get("Location"))
	if to == nil || to.Host != "github.com" || to.Query().Get("client_id") != "quickstart-github-id" {
		t.Fatalf("POST /auth/signin/github: %d Location %q; want GitHub's authorize URL with AUTH_GITHUB_ID", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestQuickstartPassword runs the quickstart and signs up with an e-mail
// address and a password, as the README shows: the sign-in page has the
// password form, sign-up answers with the verify-request page, the logged
// verification link, confirmed on its page, signs in, and after signing out the password signs in
// again (a wrong one is refused).
func TestQuickstartPassword(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "quickstart")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := freePort(t)
	site := "http://localhost:" + port
	p := start(t, bin, t.TempDir(), port, "password-secret-0123456789-0123456789-0123")
	defer p.stop(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	page := get(t, c, site+"/auth/signin", "text/html")
	body, _ := io.ReadAll(page.Body)
	if !strings.Contains(string(body), `action="`+site+`/auth/callback/password"`) || !strings.Contains(string(body), `href="`+site+`/auth/password/signup"`) {
		t.Fatalf("the sign-in page has no password form or sign-up link:\n%s", body)
	}
	const email, pw = "grace@example.com", "a long enough passphrase"
	res := post(t, c, site+"/auth/password/signup", url.Values{"email": {email}, "password": {pw}, "csrfToken": {csrfToken(t, c, site)}})
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), site+"/auth/verify-request?") {
		t.Fatalf("POST /auth/password/signup: %d Location %q; want the verify-request page", res.StatusCode, res.Header.Get("Location"))
	}
	link := p.mailed(t, "verify-email", email)
	if !strings.HasPrefix(link, site+"/auth/password/verify?") {
		t.Fatalf("verification link %q; want one to %s/auth/password/verify", link, site)
	}
	// The link opens a confirmation page; its form, posted from the
	// browser that signed up, verifies.
	if res = get(t, c, link, "text/html"); res.StatusCode != http.StatusOK {
		t.Fatalf("following the verification link: %d; want the confirmation page", res.StatusCode)
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	res = post(t, c, site+"/auth/password/verify", url.Values{"email": {u.Query().Get("email")}, "token": {u.Query().Get("token")}, "csrfToken": {csrfToken(t, c, site)}})
	if res.StatusCode/100 != 3 || strings.Contains(res.Header.Get("Location"), "error") {
		t.Fatalf("confirming the verification link: %d Location %q; want a redirect into the site", res.StatusCode, res.Header.Get("Location"))
	}
	if got := sessionEmail(t, c, site); got != email {
		t.Fatalf("after the verification link the session's user is %q, want %s", got, email)
	}
	res = post(t, c, site+"/auth/signout", url.Values{"csrfToken": {csrfToken(t, c, site)}})
	if got := sessionEmail(t, c, site); res.StatusCode/100 != 3 || got != "" {
		t.Fatalf("sign-out: %d, then the session's user is %q", res.StatusCode, got)
	}

	signIn := func(password string) *http.Response {
		return post(t, c, site+"/auth/callback/password", url.Values{"email": {email}, "password": {password}, "csrfToken": {csrfToken(t, c, site)}})
	}
	if res := signIn("not the passphrase"); !strings.Contains(res.Header.Get("Location"), "error=CredentialsSignin") {
		t.Fatalf("a wrong password: %d Location %q; want error=CredentialsSignin", res.StatusCode, res.Header.Get("Location"))
	}
	if got := sessionEmail(t, c, site); got != "" {
		t.Fatalf("a wrong password signed in as %q", got)
	}
	if res := signIn(pw); res.StatusCode != http.StatusSeeOther || strings.Contains(res.Header.Get("Location"), "error") {
		t.Fatalf("the password: %d Location %q; want a redirect into the site", res.StatusCode, res.Header.Get("Location"))
	}
	if got := sessionEmail(t, c, site); got != email {
		t.Fatalf("after the password the session's user is %q, want %s", got, email)
	}

	// From a script, as the README's curl lines: JSON in, {"url":…} out.
	jar, _ = cookiejar.New(nil)
	c.Jar = jar
	body, _ = json.Marshal(map[string]string{"csrfToken": csrfToken(t, c, site), "email": email, "password": pw})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, site+"/auth/password/signin", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	jres, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer jres.Body.Close()
	var answer struct{ URL string }
	if err := json.NewDecoder(jres.Body).Decode(&answer); err != nil || jres.StatusCode != http.StatusOK || answer.URL != site+"/" {
		t.Fatalf("JSON sign-in: %d %+v %v; want 200 {\"url\":%q}", jres.StatusCode, answer, err, site+"/")
	}
	if got := sessionEmail(t, c, site); got != email {
		t.Fatalf("after the JSON sign-in the session's user is %q, want %s", got, email)
	}
}

// sessionEmail returns /auth/session's user e-mail, "" when signed out.
func sessionEmail(t *testing.T, c *http.Client, site string) string {
	t.Helper()
	var s struct {
		User struct{ Email string } `json:"user"`
	}
	res := get(t, c, site+"/auth/session", "application/json")
	body, _ := io.ReadAll(res.Body)
	if strings.TrimSpace(string(body)) == "null" {
		return ""
	}
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("/auth/session: %v in %q", err, body)
	}
	return s.User.Email
}

type proc struct {
	cmd   *exec.Cmd
	lines chan string
}

// start runs the quickstart on port with AUTH_SECRET=secret and the
// variables in env ("NAME=value") added.
func start(t *testing.T, bin, dir, port, secret string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PORT="+port, "AUTH_SECRET="+secret,
		"AUTH_GITHUB_ID=quickstart-github-id", "AUTH_GITHUB_SECRET=quickstart-github-secret")
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.Dial("tcp", "localhost:"+port)
		if err == nil {
			conn.Close()
			return p
		}
		if time.Now().After(deadline) {
			p.stop(t)
			t.Fatalf("the quickstart does not listen on port %s after 20s", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// link waits for the line the quickstart logs with the sign-in link.
func (p *proc) link(t *testing.T, email string) string {
	t.Helper()
	return p.mailed(t, "sign-in", email)
}

// mailed waits for the line the quickstart logs with the link of a mail
// of the purpose ("sign-in", "verify-email", "reset-password") to email.
func (p *proc) mailed(t *testing.T, purpose, email string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("the quickstart exited before logging a %s link", purpose)
			}
			t.Log(line)
			if _, l, ok := strings.Cut(line, purpose+" link for "+email+": "); ok {
				return l
			}
		case <-timeout:
			t.Fatalf("no %s link logged within 10s", purpose)
		}
	}
}

func (p *proc) stop(t *testing.T) {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	for line := range p.lines {
		t.Log(line)
	}
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func csrfToken(t *testing.T, c *http.Client, site string) string {
	t.Helper()
	var v struct{ CSRFToken string }
	res := get(t, c, site+"/auth/csrf", "application/json")
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil || v.CSRFToken == "" {
		t.Fatalf("/auth/csrf: %v", err)
	}
	return v.CSRFToken
}

func get(t *testing.T, c *http.Client, u, accept string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	req.Header.Set("Accept", accept)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func post(t *testing.T, c *http.Client, u string, form url.Values) *http.Response {
	t.Helper()
	res, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// TestReadme checks that the README's quickstart is this program, from its
// package clause to the end, so that what a reader copies is what
// TestQuickstart ran.
func TestReadme(t *testing.T) {
	readme, src := readmeAnd(t, "main.go")
	_, code, _ := strings.Cut(src, "\npackage main\n")
	if !strings.Contains(readme, "```go\npackage main\n"+code+"```\n") {
		t.Error("README.md's quickstart differs from examples/quickstart/main.go: copy main.go from `package main` on into the README's Quickstart block")
	}
}

// readmeAnd returns the repository's README.md and the file of this
// package whose code it quotes.
func readmeAnd(t *testing.T, file string) (readme, src string) {
	t.Helper()
	r, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(r), string(b)
}
