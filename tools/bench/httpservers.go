package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/authport/authport/core/auth"
	coreprovider "github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// The servers of the HTTP rows: authport's handler in process on a
// loopback port, and Auth.js's Auth() under Node (authjs/server.mjs).

// benchSecret is the AUTH_SECRET both servers share.
const benchSecret = "authport-bench-secret-0123456789abcdef"

// sessionCookie is the session cookie's name on http (both sides).
const sessionCookie = "authjs.session-token"

// server is one HTTP server the client calls: origin is
// "http://127.0.0.1:<port>"; its routes are under /auth, and
// /bench/link?email= answers the last sign-in link sent to an address.
type server struct {
	origin string
	close  func()
}

// linkStore keeps the last sign-in link per address (the bench's e-mail
// "delivery").
type linkStore struct {
	mu    sync.Mutex
	links map[string]string
}

func (l *linkStore) send(_ context.Context, req coreprovider.VerificationRequest) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.links[req.Identifier] = req.URL
	return nil
}

func (l *linkStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	link, ok := l.links[r.URL.Query().Get("email")]
	l.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = io.WriteString(w, link)
}

// goServerConfig is what an authport server differs in.
type goServerConfig struct {
	adapter   any
	strategy  auth.Strategy
	updateAge *time.Duration
	newUserID func() (string, error)
}

// goHandler builds authport's handler for origin.
func goHandler(origin string, c goServerConfig, links *linkStore) (*handler.Handler, error) {
	a, err := goAuth(origin, c, links)
	if err != nil {
		return nil, err
	}
	// Rate limits off: the bench signs one address in many times a second,
	// and Auth.js, beside it, has none.
	return handler.New(handler.Config{Auth: a, RateLimit: handler.RateLimit{Disabled: true}})
}

// goAuth builds the auth.Auth of goHandler's handler.
func goAuth(origin string, c goServerConfig, links *linkStore) (*auth.Auth, error) {
	var providers []coreprovider.Provider
	if c.adapter != nil {
		providers = append(providers, coreprovider.Email("bench@bench.example", links.send))
	} else {
		providers = append(providers, &coreprovider.CredentialsConfig{ID: "credentials", Name: "Credentials",
			Authorize: func(context.Context, coreprovider.AuthorizeRequest) (*coreprovider.User, error) { return nil, nil }})
	}
	return auth.New(auth.Config{Adapter: c.adapter, Providers: providers, Secrets: []string{benchSecret},
		BaseURL: origin + "/auth", GenerateUserID: c.newUserID,
		Session: auth.SessionOptions{Strategy: c.strategy, UpdateAge: c.updateAge}})
}

// startGo serves authport's handler on a loopback port.
func startGo(c goServerConfig) (*server, *handler.Handler, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	origin := "http://" + ln.Addr().String()
	links := &linkStore{links: map[string]string{}}
	h, err := goHandler(origin, c, links)
	if err != nil {
		_ = ln.Close()
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", h)
	mux.Handle("/bench/link", links)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &server{origin: origin, close: func() { _ = srv.Close() }}, h, nil
}

// authjsDir is where authjs/server.mjs and its node_modules are (the
// bench runs in tools/bench).
const authjsDir = "authjs"

// authjsMissing says why Auth.js's server cannot run, or "".
func authjsMissing() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not installed: install Node.js 20+, then run npm ci in tools/bench/authjs"
	}
	for _, p := range []string{"@auth/core/index.js", "@auth/pg-adapter/index.js", "@auth/unstorage-adapter/index.js"} {
		if _, err := os.Stat(filepath.Join(authjsDir, "node_modules", filepath.FromSlash(p))); err != nil {
			return p + " is not installed: run npm ci in tools/bench/authjs"
		}
	}
	return ""
}

// nodeConfig is server.mjs's argument.
type nodeConfig struct {
	Secret    string `json:"secret"`
	Adapter   string `json:"adapter"` // pg, unstorage, none
	URL       string `json:"url,omitempty"`
	Schema    string `json:"schema,omitempty"`
	Base      string `json:"base,omitempty"`
	Strategy  string `json:"strategy"`
	UpdateAge *int   `json:"updateAge,omitempty"`
}

// startNode runs authjs/server.mjs and waits for its port.
func startNode(ctx context.Context, c nodeConfig) (*server, error) {
	c.Secret = benchSecret
	arg, _ := json.Marshal(c)
	cmd := exec.Command("node", "server.mjs", string(arg))
	cmd.Dir = authjsDir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if os.Getenv("AUTHPORT_BENCH_DEBUG") != "" {
		cmd.Stderr = io.MultiWriter(&stderr, os.Stderr)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting node: %w", err)
	}
	stop := func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case s := <-line:
		port, ok := strings.CutPrefix(strings.TrimSpace(s), "listening ")
		if !ok {
			stop()
			return nil, fmt.Errorf("authjs/server.mjs did not start: %q %s", s, stderr.String())
		}
		return &server{origin: "http://127.0.0.1:" + port, close: stop}, nil
	case <-time.After(30 * time.Second):
		stop()
		return nil, fmt.Errorf("authjs/server.mjs did not answer in 30s: %s", stderr.String())
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
}
