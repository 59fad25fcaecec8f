package oauthtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// BackendDex is the AUTHPORT_REQUIRE name of dex, the OpenID provider the
// sign-in tests run against (see [Dex]).
const BackendDex = "dex"

// DexBinEnv is the environment variable naming the dex binary [Dex] runs.
// scripts/services.sh builds one from tools/dex and prints it.
const DexBinEnv = "AUTHPORT_DEX_BIN"

// Defaults of a zero [DexConfig].
const (
	DefaultDexClientID     = "authport-test"
	DefaultDexClientSecret = "authport-test-secret"
	DefaultDexRedirectURI  = "http://127.0.0.1:3000/auth/callback/dex"
	DefaultDexUserEmail    = "alice@example.com"
	DefaultDexUserName     = "alice"
	DefaultDexUserPassword = "password"
	DefaultDexUserID       = "5b8f7a52-1c1e-4d07-9a55-a11ce0000001"
)

// How long [Dex] waits for its server to answer, and how often it asks.
const (
	dexStartTimeout = 30 * time.Second
	dexPollInterval = 100 * time.Millisecond
	dexStartTries   = 3 // a port taken between choosing and binding it gets another
)

// DexConfig is what a test's dex server knows: its OAuth clients and the
// users of its password database. An empty Clients gets the one default
// client, an empty Users the one default user (see the DefaultDex constants).
type DexConfig struct {
	Clients []DexClient
	Users   []DexUser
	// PostgresURL, when set, is a PostgreSQL database
	// (postgres://user:password@host:port/db?sslmode=disable) dex keeps
	// its state in, instead of memory. Refreshing needs it: dex's memory
	// (and SQLite, one connection) storage deadlocks on a refresh_token
	// grant, whose rotation reads the offline session while holding the
	// refresh token's transaction. The database must be the test's own.
	PostgresURL string
}

// DexClient is an OAuth 2.0 client registered with dex.
type DexClient struct {
	// ID is the client_id; required.
	ID string
	// Secret is the client_secret; required unless Public.
	Secret string
	// Name is shown on dex's pages; the ID when empty.
	Name string
	// RedirectURIs are the exact redirect_uri values dex accepts.
	RedirectURIs []string
	// Public marks a client without a secret (a native or browser app),
	// which proves itself with PKCE instead.
	Public bool
}

// DexUser is a user of dex's password database, who signs in with Email and
// Password (see [DexServer.Login]).
type DexUser struct {
	// Email is the login name and the email claim; required.
	Email string
	// Username is the name claim; the part of Email before the @ when empty.
	Username string
	// Password is the plain password; required. dex is given only its
	// bcrypt hash, made when the server starts: under the race detector
	// that takes seconds for any password but DefaultDexUserPassword,
	// whose hash is made already.
	Password string
	// UserID is the user's id at dex, from which dex derives the sub claim;
	// derived from Email when empty.
	UserID string
}

// DexServer is a running dex server private to one test, started by [Dex].
type DexServer struct {
	// Issuer is the OpenID issuer URL, e.g. http://127.0.0.1:40123/dex;
	// discovery is at Issuer + "/.well-known/openid-configuration".
	Issuer string
	// Config is the configuration the server runs with, defaults filled in.
	Config DexConfig

	logPath string
}

// Dex starts a dex server for t and returns it once its discovery document
// answers; it is stopped in t.Cleanup, and on failure of t the end of its
// log is shown. Each call starts a server of its own, on a free loopback
// port, with in-memory storage, the password database holding cfg.Users and
// the approval screen skipped, so that [DexServer.Login] goes straight from
// the login form to the client's redirect_uri.
//
// The binary is the one AUTHPORT_DEX_BIN names (scripts/services.sh builds
// it from tools/dex). Without it t is skipped, or failed when
// AUTHPORT_REQUIRE names dex or is all. An invalid cfg, or a server that
// does not come up within 30 seconds, fails t.
func Dex(t testing.TB, cfg DexConfig) *DexServer {
	t.Helper()
	bin := dexBinary(t, os.Getenv)
	if bin == "" {
		return nil // skipped or failed
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatalf("oauthtest.Dex: %v", err)
		return nil
	}
	passwords, err := dexPasswords(cfg.Users)
	if err != nil {
		t.Fatalf("oauthtest.Dex: %v", err)
		return nil
	}
	dir := t.TempDir()
	var lastErr error
	for range dexStartTries {
		d, stop, err := startDex(bin, dir, cfg, passwords)
		if err == nil {
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					t.Logf("dex %s log, last lines of %s:\n%s", d.Issuer, d.logPath, logTail(d.logPath, 40))
				}
			})
			return d
		}
		lastErr = err
		if !errors.Is(err, errDexPortTaken) {
			break
		}
	}
	t.Fatalf("oauthtest.Dex: %v", lastErr)
	return nil
}

// RequireEnv is the environment variable that turns a missing dex from a
// skip into a failure: a comma-separated list of names (the same list the
// database helpers of conformance/provision read) that holds "dex" or
// "all".
const RequireEnv = "AUTHPORT_REQUIRE"

// dexBinary returns the dex binary named by AUTHPORT_DEX_BIN, read through
// getenv. Without it t is skipped, or failed when AUTHPORT_REQUIRE names
// dex or is all, and "" returned; a variable naming something that is not
// an executable file fails t.
func dexBinary(t testing.TB, getenv func(string) string) string {
	t.Helper()
	bin := strings.TrimSpace(getenv(DexBinEnv))
	if bin == "" {
		why := "no dex: set " + DexBinEnv + " to a dex binary (eval \"$(scripts/services.sh)\" builds one from tools/dex)"
		for name := range strings.SplitSeq(getenv(RequireEnv), ",") {
			if name = strings.ToLower(strings.TrimSpace(name)); name == "all" || name == BackendDex {
				t.Fatal(why + " (" + RequireEnv + " requires " + BackendDex + ")")
				return ""
			}
		}
		t.Skip(why)
		return ""
	}
	info, err := os.Stat(bin)
	if err == nil && (info.IsDir() || info.Mode().Perm()&0o111 == 0) {
		err = errors.New("not an executable file")
	}
	if err != nil {
		t.Fatal(fmt.Sprintf("%s=%q cannot be run (%v): point it at a dex binary, or unset it and run eval \"$(scripts/services.sh)\"", DexBinEnv, bin, err))
		return ""
	}
	return bin
}

// errDexPortTaken reports that dex could not bind the port it was given,
// which something else took after it was chosen.
var errDexPortTaken = errors.New("dex's port was taken")

// errDexConfig reports an invalid [DexConfig].
var errDexConfig = errors.New("invalid DexConfig")

// withDefaults returns c with the defaults of a zero config and of empty
// optional fields filled in, or an error wrapping errDexConfig naming what
// is missing.
func (c DexConfig) withDefaults() (DexConfig, error) {
	out := DexConfig{PostgresURL: c.PostgresURL}
	if len(c.Clients) == 0 {
		out.Clients = []DexClient{{
			ID: DefaultDexClientID, Secret: DefaultDexClientSecret, Name: "authport tests",
			RedirectURIs: []string{DefaultDexRedirectURI},
		}}
	}
	seen := map[string]bool{}
	for i, cl := range c.Clients {
		switch {
		case cl.ID == "":
			return DexConfig{}, fmt.Errorf("%w: Clients[%d] has no ID", errDexConfig, i)
		case seen["client "+cl.ID]:
			return DexConfig{}, fmt.Errorf("%w: Clients[%d]: client ID %q appears twice", errDexConfig, i, cl.ID)
		case cl.Secret == "" && !cl.Public:
			return DexConfig{}, fmt.Errorf("%w: Clients[%d] (%s) has no Secret: give it one, or set Public", errDexConfig, i, cl.ID)
		}
		seen["client "+cl.ID] = true
		if cl.Name == "" {
			cl.Name = cl.ID
		}
		cl.RedirectURIs = append([]string(nil), cl.RedirectURIs...)
		out.Clients = append(out.Clients, cl)
	}
	if len(c.Users) == 0 {
		out.Users = []DexUser{{
			Email: DefaultDexUserEmail, Username: DefaultDexUserName,
			Password: DefaultDexUserPassword, UserID: DefaultDexUserID,
		}}
	}
	for i, u := range c.Users {
		switch {
		case u.Email == "":
			return DexConfig{}, fmt.Errorf("%w: Users[%d] has no Email", errDexConfig, i)
		case seen["email "+strings.ToLower(u.Email)]:
			return DexConfig{}, fmt.Errorf("%w: Users[%d]: email %q appears twice", errDexConfig, i, u.Email)
		case u.Password == "":
			return DexConfig{}, fmt.Errorf("%w: Users[%d] (%s) has no Password", errDexConfig, i, u.Email)
		case len(u.Password) > 72:
			return DexConfig{}, fmt.Errorf("%w: Users[%d] (%s): bcrypt takes passwords of at most 72 bytes", errDexConfig, i, u.Email)
		}
		seen["email "+strings.ToLower(u.Email)] = true
		if u.Username == "" {
			u.Username, _, _ = strings.Cut(u.Email, "@")
		}
		if u.UserID == "" {
			sum := sha256.Sum256([]byte(strings.ToLower(u.Email)))
			u.UserID = "user-" + hex.EncodeToString(sum[:8])
		}
		out.Users = append(out.Users, u)
	}
	return out, nil
}

// dexPassword is one entry of dex's staticPasswords.
type dexPassword struct {
	Email    string `json:"email"`
	Hash     string `json:"hash"`
	Username string `json:"username"`
	UserID   string `json:"userID"`
}

// defaultDexPasswordHash is a bcrypt hash of DefaultDexUserPassword at
// dex's minimum cost, made once: under the race detector hashing takes
// seconds.
const defaultDexPasswordHash = "$2a$10$wWVcNZe4geSqgFvwfDu0v.K9gFJub.KEyJOTESzQDQ8SaBJ9VPH.G"

// dexPasswords hashes the users' passwords for dex, at bcrypt's default
// cost (dex refuses to check a password against a cheaper hash), all at
// once.
func dexPasswords(users []DexUser) ([]dexPassword, error) {
	out := make([]dexPassword, len(users))
	errs := make([]error, len(users))
	var wg sync.WaitGroup
	for i, u := range users {
		out[i] = dexPassword{Email: u.Email, Hash: defaultDexPasswordHash, Username: u.Username, UserID: u.UserID}
		if u.Password == DefaultDexUserPassword {
			continue
		}
		wg.Go(func() {
			hash, err := bcrypt.GenerateFromPassword([]byte(u.Password), bcrypt.DefaultCost)
			if err != nil {
				errs[i] = fmt.Errorf("hashing the password of %s: %w", u.Email, err)
				return
			}
			out[i].Hash = string(hash)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// dexConfigFile is dex's configuration file. dex reads YAML, of which JSON
// is a subset.
type dexConfigFile struct {
	Issuer  string `json:"issuer"`
	Storage struct {
		Type   string       `json:"type"`
		Config *dexPostgres `json:"config,omitempty"`
	} `json:"storage"`
	Web struct {
		HTTP string `json:"http"`
	} `json:"web"`
	OAuth2 struct {
		SkipApprovalScreen bool `json:"skipApprovalScreen"`
	} `json:"oauth2"`
	Logger struct {
		Level  string `json:"level"`
		Format string `json:"format"`
	} `json:"logger"`
	EnablePasswordDB bool              `json:"enablePasswordDB"`
	StaticClients    []dexStaticClient `json:"staticClients"`
	StaticPasswords  []dexPassword     `json:"staticPasswords"`
}

// dexPostgres is dex's postgres storage configuration.
type dexPostgres struct {
	Host     string `json:"host"`
	Database string `json:"database"`
	User     string `json:"user"`
	Password string `json:"password,omitempty"`
	SSL      struct {
		Mode string `json:"mode"`
	} `json:"ssl"`
}

// newDexPostgres reads a postgres:// URL into dex's configuration.
func newDexPostgres(raw string) (*dexPostgres, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" || len(u.Path) < 2 {
		return nil, fmt.Errorf("%w: PostgresURL %q is not postgres://user@host:port/database", errDexConfig, raw)
	}
	p := &dexPostgres{Host: u.Host, Database: u.Path[1:], User: u.User.Username()}
	p.Password, _ = u.User.Password()
	p.SSL.Mode = cmpOr(u.Query().Get("sslmode"), "disable")
	return p, nil
}

// dexStaticClient is one entry of dex's staticClients.
type dexStaticClient struct {
	ID           string   `json:"id"`
	Secret       string   `json:"secret,omitempty"`
	Name         string   `json:"name"`
	RedirectURIs []string `json:"redirectURIs"`
	Public       bool     `json:"public"`
}

// startDex writes a configuration into dir and starts bin on a free port.
// It returns the server once discovery answers, and the function that stops
// it. An error wraps errDexPortTaken when the port was taken meanwhile.
func startDex(bin, dir string, cfg DexConfig, passwords []dexPassword) (*DexServer, func(), error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, nil, err
	}
	issuer := "http://" + addr + "/dex"
	var file dexConfigFile
	file.Issuer = issuer
	file.Storage.Type = "memory"
	if cfg.PostgresURL != "" {
		if file.Storage.Config, err = newDexPostgres(cfg.PostgresURL); err != nil {
			return nil, nil, err
		}
		file.Storage.Type = "postgres"
	}
	file.Web.HTTP = addr
	file.OAuth2.SkipApprovalScreen = true
	file.Logger.Level = "info" // debug would log requests in full
	file.Logger.Format = "text"
	file.EnablePasswordDB = true
	file.StaticPasswords = passwords
	for _, cl := range cfg.Clients {
		file.StaticClients = append(file.StaticClients, dexStaticClient(cl))
	}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("encoding dex's configuration: %w", err)
	}
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	configPath := filepath.Join(dir, "dex-"+port+".yaml")
	logPath := filepath.Join(dir, "dex-"+port+".log")
	// The file holds client secrets and password hashes: for us alone.
	if err := os.WriteFile(configPath, data, 0o600); err != nil {
		return nil, nil, fmt.Errorf("writing dex's configuration: %w", err)
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("creating dex's log: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor

	cmd := exec.Command(bin, "serve", configPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = dexEnv(os.Environ())
	cmd.SysProcAttr = dexProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	d := &DexServer{Issuer: issuer, Config: cfg, logPath: logPath}

	discovery := issuer + "/.well-known/openid-configuration"
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(dexStartTimeout)
	for {
		if dexAnswers(client, discovery, issuer) {
			return d, stop, nil
		}
		select {
		case <-exited:
			tail := logTail(logPath, 20)
			err := fmt.Errorf("%s exited before answering at %s (%v); the end of its log %s:\n%s", bin, discovery, waitErr, logPath, tail)
			if strings.Contains(tail, "address already in use") {
				err = fmt.Errorf("%w: %w", errDexPortTaken, err)
			}
			return nil, nil, err
		case <-time.After(dexPollInterval):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, nil, fmt.Errorf("dex did not answer at %s within %v; the end of its log %s:\n%s",
				discovery, dexStartTimeout, logPath, logTail(logPath, 20))
		}
	}
}

// dexEnv returns environ without dex's own feature switches (DEX_*), so
// that the caller's environment cannot change how the test server behaves,
// and with unknown configuration fields refused, so that a mistake in the
// configuration written here fails loudly.
func dexEnv(environ []string) []string {
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "DEX_") {
			out = append(out, kv)
		}
	}
	return append(out, "DEX_CONFIG_DISALLOW_UNKNOWN_FIELDS=true")
}

// dexAnswers reports whether the discovery document at url answers with
// issuer.
func dexAnswers(client *http.Client, url, issuer string) bool {
	resp, err := client.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var doc struct {
		Issuer string `json:"issuer"`
	}
	return resp.StatusCode == http.StatusOK &&
		json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc) == nil && doc.Issuer == issuer
}

// freeLoopbackAddr returns 127.0.0.1:PORT for a port that was free a moment
// ago.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port for dex: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// logTail returns the last n lines of the file at path, indented, or a note
// saying why it cannot.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "    (" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}
