package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/oauth/oauthtest"
)

// TestREADMECommand starts the application as its README says, `go run .`
// with none of its variables set (only PORT, for a free port): it starts
// the repository's dex and keeps users in webapp.db, and the admin signs in
// through dex with the role in the session. dex is AUTHPORT_DEX_BIN's (as
// scripts/services.sh prints it; without it the application would run
// scripts/services.sh itself, which builds dex, minutes on a cold cache):
// without it the test is skipped, or fails when AUTHPORT_REQUIRE names dex.
func TestREADMECommand(t *testing.T) {
	if os.Getenv(oauthtest.DexBinEnv) == "" {
		for name := range strings.SplitSeq(os.Getenv(oauthtest.RequireEnv), ",") {
			if name = strings.TrimSpace(name); name == "all" || name == oauthtest.BackendDex {
				t.Fatalf("no dex: set %s (eval \"$(scripts/services.sh)\" builds one); %s requires dex", oauthtest.DexBinEnv, oauthtest.RequireEnv)
			}
		}
		t.Skipf("no dex: set %s (eval \"$(scripts/services.sh)\" builds one)", oauthtest.DexBinEnv)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "webapp")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race") // reuses what the test binary compiled
	}
	build := exec.Command(goCommand(), append(args, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "DATABASE_URL", "AUTH_SECRET", "AUTH_URL", "OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "ALLOWED_DOMAINS", "ADMINS", "PORT":
		default:
			env = append(env, kv)
		}
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = append(env, "PORT="+port)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		output strings.Builder
		issuer = make(chan string, 1)
		done   = make(chan error, 1)
	)
	dexLine := regexp.MustCompile(`repository's dex at (http://\S+/dex) `)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			output.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := dexLine.FindStringSubmatch(sc.Text()); m != nil {
				issuer <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
		done <- cmd.Wait()
	}()
	logs := func() string { mu.Lock(); defer mu.Unlock(); return output.String() }
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		}
	}
	t.Cleanup(stop)

	base := "http://localhost:" + port
	var dexIssuer string
	select {
	case dexIssuer = <-issuer:
	case err := <-done:
		t.Fatalf("the application exited (%v):\n%s", err, logs())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the application did not start dex within 2 minutes:\n%s", logs())
	}
	for deadline := time.Now().Add(time.Minute); ; {
		res, err := http.Get(base + "/auth/providers")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s/auth/providers: %v; the application's log:\n%s", base, err, logs())
		}
		time.Sleep(100 * time.Millisecond)
	}

	s := &site{t: t, base: base, dex: &oauthtest.DexServer{Issuer: dexIssuer}}
	c := s.signIn(t, devUsers[0])
	var session struct {
		User struct{ Email, Role string }
	}
	s.getJSON(t, c, "/auth/session", "", &session)
	if session.User.Email != devUsers[0] || session.User.Role != "admin" {
		t.Errorf("GET /auth/session = %+v, want %s with role admin", session, devUsers[0])
	}
	var me struct{ Email, Role string }
	s.getJSON(t, s.signIn(t, devUsers[1]), "/api/me", "", &me)
	if me.Email != devUsers[1] || me.Role != "member" {
		t.Errorf("GET /api/me = %+v, want %s with role member", me, devUsers[1])
	}
	stop()
	out := logs()
	for _, want := range []string{"DATABASE_URL is not set", "webapp.db", "AUTH_SECRET is not set", "OIDC_ISSUER is not set", devPassword} {
		if !strings.Contains(out, want) {
			t.Errorf("the start-up log does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "webapp.db")); err != nil {
		t.Errorf("no webapp.db in the working directory: %v", err)
	}
	if res, err := (&http.Client{Timeout: time.Second}).Get(dexIssuer + "/.well-known/openid-configuration"); err == nil {
		res.Body.Close()
		t.Errorf("dex still answers at %s after the application stopped", dexIssuer)
	}
}

// TestConfigErrorsNameTheVariables checks that the start-up errors name
// the variables the application reads.
func TestConfigErrorsNameTheVariables(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		env        map[string]string
		want, omit []string
	}{
		{map[string]string{"OIDC_ISSUER": "https://sso.example.com"}, []string{"OIDC_CLIENT_ID", "ALLOWED_DOMAINS", "OIDC_CLIENT_SECRET", "/auth/callback/sso"}, []string{"AUTH_SSO_ID"}},
		{map[string]string{"OIDC_ISSUER": "https://sso.example.com", "OIDC_CLIENT_ID": "x"}, []string{"ALLOWED_DOMAINS"}, []string{"OIDC_CLIENT_ID and"}},
		{map[string]string{"OIDC_CLIENT_ID": "x"}, []string{"OIDC_ISSUER"}, nil},
	} {
		_, _, closeDev, err := configFromEnv(context.Background(), func(k string) string { return tc.env[k] }, logger)
		closeDev()
		if err == nil {
			t.Errorf("%v: no error", tc.env)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v; want it to name %s", tc.env, err, w)
			}
		}
		for _, o := range tc.omit {
			if strings.Contains(err.Error(), o) {
				t.Errorf("%v: %v; it names %s", tc.env, err, o)
			}
		}
	}
	cfg, addr, closeDev, err := configFromEnv(context.Background(), func(k string) string {
		return map[string]string{"OIDC_ISSUER": "https://sso.example.com", "OIDC_CLIENT_ID": "x", "ALLOWED_DOMAINS": "example.com", "PORT": "9090"}[k]
	}, logger)
	closeDev()
	if err != nil || addr != "localhost:9090" || cfg.BaseURL != "http://localhost:9090/auth" || cfg.DatabaseFile != "webapp.db" || len(cfg.Secrets) != 1 {
		t.Errorf("configFromEnv = %+v, %q, %v; want BaseURL on PORT, webapp.db and a random secret", cfg, addr, err)
	}
}

// TestExportedValue reads scripts/services.sh's export lines.
func TestExportedValue(t *testing.T) {
	out := "export AUTHPORT_POSTGRES_URL='postgres://x'\nexport AUTHPORT_DEX_BIN='/home/o'\\''brien/.cache/authport/dex-1'\n"
	if got := exportedValue(out, "AUTHPORT_DEX_BIN"); got != "/home/o'brien/.cache/authport/dex-1" {
		t.Errorf("exportedValue = %q", got)
	}
	if got := exportedValue(out, "AUTHPORT_MONGODB_URL"); got != "" {
		t.Errorf("exportedValue of a missing name = %q", got)
	}
	if repo, err := findRepo(); err != nil || !fileExists(filepath.Join(repo, "tools", "dex", "go.mod")) {
		t.Errorf("findRepo = %q, %v; want the repository", repo, err)
	}
}

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

// goCommand is the go command that runs the tests.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
