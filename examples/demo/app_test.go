package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/mail"
	"github.com/go-sql-driver/mysql"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestParseFlags(t *testing.T) {
	noEnv := func(string) string { return "" }
	cfg, port, err := parseFlags(nil, noEnv, io.Discard)
	if err != nil || port != 8080 || cfg.URL != "http://localhost:8080" || cfg.DB != "" || len(cfg.Secret) < 32 || cfg.SMTP != "" || cfg.OIDC.Issuer != "" {
		t.Errorf("defaults: %+v, port %d, %v", cfg, port, err)
	}
	other, _, _ := parseFlags(nil, noEnv, io.Discard)
	if other.Secret == cfg.Secret {
		t.Error("two runs without AUTH_SECRET got the same secret")
	}
	env := map[string]string{"PORT": "9000", "DATABASE_URL": "memory", "AUTH_SECRET": "s3cret", "OIDC_ISSUER": "http://127.0.0.1:5556/dex", "OIDC_CLIENT_ID": "demo"}
	cfg, port, err = parseFlags([]string{"-db", "sqlite:x.db", "-port", "9001"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || port != 9001 || cfg.URL != "http://localhost:9001" || cfg.DB != "sqlite:x.db" || cfg.Secret != "s3cret" ||
		cfg.OIDC.Issuer != env["OIDC_ISSUER"] || cfg.OIDC.ClientID != "demo" || cfg.OIDC.ID != "dex" {
		t.Errorf("flags over environment: %+v, port %d, %v", cfg, port, err)
	}
	for _, bad := range [][]string{{"-port", "0"}, {"-port", "70000"}, {"extra"}, {"-nosuchflag"}} {
		if _, _, err := parseFlags(bad, noEnv, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
	if _, _, err := parseFlags(nil, func(k string) string { return map[string]string{"PORT": "http"}[k] }, io.Discard); err == nil {
		t.Error("PORT=http accepted")
	}
}

func TestSMTPConfig(t *testing.T) {
	tests := []struct {
		in   string
		want mail.Config
	}{
		{"smtp://smtp.example.com", mail.Config{Host: "smtp.example.com", TLS: mail.TLSMandatory}},
		{"smtp://u:p%40ss@smtp.example.com:2525?tls=opportunistic", mail.Config{Host: "smtp.example.com", Port: 2525, Username: "u", Password: "p@ss", TLS: mail.TLSOpportunistic}},
		{"smtp://127.0.0.1:25?tls=none", mail.Config{Host: "127.0.0.1", Port: 25, TLS: mail.TLSNone}},
		{"smtps://smtp.example.com", mail.Config{Host: "smtp.example.com", TLS: mail.TLSImplicit}},
	}
	for _, tt := range tests {
		got, err := smtpConfig(tt.in)
		if err != nil || got.Host != tt.want.Host || got.Port != tt.want.Port || got.TLS != tt.want.TLS ||
			got.Username != tt.want.Username || got.Password != tt.want.Password {
			t.Errorf("smtpConfig(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "smtp://", "http://smtp.example.com", "smtp://h:port", "smtp://h?tls=maybe"} {
		if _, err := smtpConfig(bad); err == nil {
			t.Errorf("smtpConfig(%q) accepted", bad)
		}
	}
	// The password never shows in an error.
	if _, err := smtpConfig("smtp://u:hunter2@h?tls=maybe"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v", err)
	}
}

func TestNewAppRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ok := appConfig{URL: "http://localhost:8080", Secret: "demo-test-secret-of-32-bytes-or-more", DB: "memory"}
	tests := map[string]func(c *appConfig){
		"no secret":            func(c *appConfig) { c.Secret = "" },
		"short secret":         func(c *appConfig) { c.Secret = "s3cret" },
		"not an origin":        func(c *appConfig) { c.URL = "http://localhost:8080/app" },
		"no scheme":            func(c *appConfig) { c.URL = "localhost:8080" },
		"unknown db":           func(c *appConfig) { c.DB = "oracle://db" },
		"bbolt without a file": func(c *appConfig) { c.DB = "bbolt:" },
		"sqlite without file":  func(c *appConfig) { c.DB = "sqlite:" },
		"mysql without db":     func(c *appConfig) { c.DB = "mysql://root@127.0.0.1:3306" },
		"bad smtp":             func(c *appConfig) { c.SMTP = "http://mail" },
		"oidc without client":  func(c *appConfig) { c.OIDC.Issuer = "http://127.0.0.1:1/dex" },
		"bad credentials":      func(c *appConfig) { c.Credentials = "alice" },
		"bbolt in a directory": func(c *appConfig) { c.DB = "bbolt:" + dir },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			c := ok
			change(&c)
			a, err := newApp(ctx, c)
			if err == nil {
				_ = a.Close()
				t.Fatalf("newApp(%+v) accepted", c)
			}
			t.Log(err)
		})
	}
	if _, err := openStore(ctx, "oracle://db"); !errors.Is(err, errBadDB) {
		t.Errorf("unknown -db: %v, want errBadDB", err)
	}
	a, err := newApp(ctx, ok)
	if err != nil {
		t.Fatalf("newApp(%+v): %v", ok, err)
	}
	_ = a.Close()
}

func TestMySQLDSN(t *testing.T) {
	got, err := mysqlDSN("mysql://root:pw@db.example:3307/test?charset=utf8mb4")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(got)
	if err != nil || cfg.User != "root" || cfg.Passwd != "pw" || cfg.Addr != "db.example:3307" || cfg.DBName != "test" || !cfg.ParseTime || cfg.Params["charset"] != "utf8mb4" {
		t.Errorf("mysqlDSN = %q (%+v, %v)", got, cfg, err)
	}
	if got, _ := mysqlDSN("mysql://root@db/test"); !strings.Contains(got, "tcp(db:3306)") {
		t.Errorf("default port: %q", got)
	}
}

// TestEveryDB signs in by e-mail over HTTP (no browser, no SMTP: the link
// is read from the console) on every -db form, so that each of them really
// opens a working adapter.
func TestEveryDB(t *testing.T) {
	tests := []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"memory", func(*testing.T) string { return "memory" }},
		{"bbolt", func(t *testing.T) string { return "bbolt:" + filepath.Join(t.TempDir(), "demo.db") }},
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "demo.sqlite") }},
		{"postgres", postgresDB},
		{"mysql URL", func(t *testing.T) string {
			cfg := mysqlDatabase(t)
			u := url.URL{Scheme: "mysql", User: url.User(cfg.User), Host: cfg.Addr, Path: "/" + cfg.DBName}
			if cfg.Passwd != "" {
				u.User = url.UserPassword(cfg.User, cfg.Passwd)
			}
			return u.String()
		}},
		{"mysql DSN", func(t *testing.T) string { return mysqlDatabase(t).FormatDSN() }},
		{"redis", redisDB},
		{"mongodb", mongoDB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			console := &coretest.SyncBuffer{}
			l := listen(t)
			serve(t, l, appConfig{DB: tt.db(t), Console: console})
			signInOverHTTP(t, l.origin, console)
		})
	}
}

// mysqlDatabase makes a database for t alone on the MySQL server, dropped
// when t ends, and returns its DSN.
func mysqlDatabase(t *testing.T) *mysql.Config {
	cfg, err := mysql.ParseDSN(provision.MySQL(t))
	if err != nil {
		t.Fatalf("AUTHPORT_MYSQL_URL: %v", err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	name := randomName("demo_")
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE " + name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	cfg.DBName = name
	return cfg
}

// mongoDB returns a MongoDB URI naming a database for t alone, dropped
// when t ends.
func mongoDB(t *testing.T) string {
	u, err := url.Parse(provision.MongoDB(t))
	if err != nil {
		t.Fatalf("AUTHPORT_MONGODB_URL: %v", err)
	}
	name := randomName("demo_")
	u.Path = "/" + name
	t.Cleanup(func() {
		c, err := mongo.Connect(options.Client().ApplyURI(u.String()).SetTimeout(30 * time.Second))
		if err != nil {
			t.Errorf("connect to drop %s: %v", name, err)
			return
		}
		defer func() { _ = c.Disconnect(context.Background()) }()
		if err := c.Database(name).Drop(context.Background()); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	return u.String()
}

var consoleLink = regexp.MustCompile(`(?m)^\s+(http://\S+)$`)

// signInOverHTTP signs in by e-mail with an HTTP client: the CSRF token,
// the form post, the link from the console, the session.
func signInOverHTTP(t *testing.T, origin string, console *coretest.SyncBuffer) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	var csrf struct {
		CSRFToken string `json:"csrfToken"`
	}
	getJSON(t, c, origin+"/auth/csrf", &csrf)
	if csrf.CSRFToken == "" {
		t.Fatal("no csrfToken")
	}
	email := randomName("cli.") + "@example.com"
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.PostForm(origin+"/auth/signin/email", url.Values{"csrfToken": {csrf.CSRFToken}, "email": {email}, "callbackUrl": {origin + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 != 3 || !strings.Contains(loc, "/auth/verify-request") {
		t.Fatalf("POST /auth/signin/email: %s to %q", resp.Status, loc)
	}
	m := consoleLink.FindStringSubmatch(console.String())
	if m == nil || !strings.Contains(console.String(), email) {
		t.Fatalf("no sign-in link for %s on the console:\n%s", email, console.String())
	}
	c.CheckRedirect = nil
	resp, err = c.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.Request.URL.String() != origin+"/" || !strings.Contains(string(body), "Signed in as "+email) {
		t.Fatalf("the link led to %s (%s):\n%s", resp.Request.URL, resp.Status, body)
	}
	var s struct {
		User struct {
			Email string `json:"email"`
		} `json:"user"`
		Expires string `json:"expires"`
	}
	getJSON(t, c, origin+"/auth/session", &s)
	if s.User.Email != email || s.Expires == "" {
		t.Errorf("/auth/session = %+v", s)
	}
	// The link is single-use.
	resp, err = c.Get(m[1])
	if err == nil {
		_ = resp.Body.Close()
		if !strings.Contains(resp.Request.URL.String(), "error=Verification") {
			t.Errorf("the link used twice led to %s, want the Verification error", resp.Request.URL)
		}
	}
}

func getJSON(t *testing.T, c *http.Client, u string, v any) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", u, resp.Status, err)
	}
}

// TestCredentials: with -credentials the form signs in with the one pair
// (a JWT session: nothing stored) and refuses any other.
func TestCredentials(t *testing.T) {
	console := &coretest.SyncBuffer{}
	l := listen(t)
	serve(t, l, appConfig{DB: "memory", Console: console, Credentials: "alice:wonderland"})
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	var csrf struct {
		CSRFToken string `json:"csrfToken"`
	}
	getJSON(t, c, l.origin+"/auth/csrf", &csrf)
	post := func(user, pass string) *http.Response {
		t.Helper()
		resp, err := c.PostForm(l.origin+"/auth/callback/credentials", url.Values{
			"csrfToken": {csrf.CSRFToken}, "username": {user}, "password": {pass}, "callbackUrl": {l.origin + "/protected"},
		})
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp
	}
	if resp := post("alice", "wrong"); resp.Request.URL.Query().Get("error") != "CredentialsSignin" {
		t.Errorf("a wrong password led to %s, want error=CredentialsSignin", resp.Request.URL)
	}
	if resp := post("alice", "wonderland"); resp.Request.URL.Path != "/protected" || resp.StatusCode != http.StatusOK {
		t.Fatalf("the right password led to %s (%s), want /protected", resp.Request.URL, resp.Status)
	}
	var s struct {
		User struct {
			Email string `json:"email"`
		} `json:"user"`
	}
	getJSON(t, c, l.origin+"/auth/session", &s)
	if s.User.Email != "alice@example.com" {
		t.Errorf("/auth/session = %+v", s)
	}
}
