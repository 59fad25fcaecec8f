package gormadapter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The interop suite runs Auth.js's own SQL adapters (pinned in
// interop/package.json and package-lock.json) in one long-lived Node
// process per test, interop/driver.mjs, which answers JSON lines on
// stdin/stdout. Go drives both sides, so calls of the two can interleave.

// nodeConfig is driver.mjs's "init" request.
type nodeConfig struct {
	Adapter string `json:"adapter"` // pg, drizzle, kysely
	Dialect string `json:"dialect"` // postgres, mysql, sqlite
	URL     string `json:"url"`
	Schema  string `json:"schema,omitempty"` // PostgreSQL search_path
	// DDL is true (the driver creates the adapter's tables) or the
	// statements to run.
	DDL any `json:"ddl,omitempty"`
}

type nodeReply struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *string         `json:"error"`
	Code   string          `json:"code"`
}

// nodeAdapter is one running driver.mjs.
type nodeAdapter struct {
	stdin   io.WriteCloser
	mu      sync.Mutex
	next    int
	waiting map[int]chan nodeReply
	dead    error
	stderr  syncBuffer
	// DDL is what the driver ran to create the tables.
	DDL []string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// requireNPM reports whether AUTHPORT_REQUIRE makes a missing Node setup a
// failure.
func requireNPM() bool {
	for _, s := range strings.Split(os.Getenv("AUTHPORT_REQUIRE"), ",") {
		if s = strings.TrimSpace(s); s == "all" || s == "npm" {
			return true
		}
	}
	return false
}

// checkNode skips the test (or fails it, when AUTHPORT_REQUIRE is all or
// names npm) when Node or interop/node_modules is missing, and returns the
// path of node.
func checkNode(t *testing.T) string {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if requireNPM() {
			t.Fatalf("%s (AUTHPORT_REQUIRE=%s)", why, os.Getenv("AUTHPORT_REQUIRE"))
		}
		t.Skip(why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed: install Node.js 20+, then run npm ci in adapters/postgres-gorm/interop")
	}
	for _, pkg := range []string{"@auth/pg-adapter", "@auth/drizzle-adapter", "@auth/kysely-adapter", "drizzle-kit", "@libsql/client"} {
		if _, err := os.Stat(filepath.Join("interop", "node_modules", filepath.FromSlash(pkg), "package.json")); err != nil {
			missing(pkg + " is not installed: run npm ci in adapters/postgres-gorm/interop")
		}
	}
	return node
}

// startNode starts driver.mjs and opens the Node adapter; it is stopped at
// cleanup.
func startNode(t *testing.T, cfg nodeConfig) *nodeAdapter {
	t.Helper()
	node := checkNode(t)
	cmd := exec.Command(node, "--expose-gc", "driver.mjs")
	cmd.Dir = "interop"
	n := &nodeAdapter{waiting: map[int]chan nodeReply{}}
	cmd.Stderr = &n.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node driver.mjs: %v", err)
	}
	n.stdin = stdin
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			var r nodeReply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				n.fail(fmt.Errorf("driver.mjs wrote %q: %v", sc.Bytes(), err))
				return
			}
			n.mu.Lock()
			ch := n.waiting[r.ID]
			delete(n.waiting, r.ID)
			n.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
		n.fail(fmt.Errorf("driver.mjs ended (%v); stderr:\n%s", sc.Err(), n.stderr.String()))
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("driver.mjs exited with %v; stderr:\n%s", err, n.stderr.String())
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("driver.mjs did not exit within 20s of its stdin closing")
		}
		<-readDone
	})
	var init struct{ DDL []string }
	if err := n.do(t, map[string]any{"op": "init", "config": cfg}, &init); err != nil {
		t.Fatalf("opening %s on %s in Node: %v", cfg.Adapter, cfg.Dialect, err)
	}
	n.DDL = init.DDL
	return n
}

// fail ends every pending and future call with err.
func (n *nodeAdapter) fail(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dead == nil {
		n.dead = err
	}
	for id, ch := range n.waiting {
		ch <- nodeReply{ID: id, Error: ptr(n.dead.Error())}
		delete(n.waiting, id)
	}
}

// do sends one request and decodes its result into out (if not nil).
func (n *nodeAdapter) do(t testing.TB, req map[string]any, out any) error {
	ch := make(chan nodeReply, 1)
	n.mu.Lock()
	if n.dead != nil {
		n.mu.Unlock()
		return n.dead
	}
	n.next++
	req["id"] = n.next
	n.waiting[n.next] = ch
	line, err := json.Marshal(req)
	if err == nil {
		_, err = n.stdin.Write(append(line, '\n'))
	}
	n.mu.Unlock()
	if err != nil {
		return fmt.Errorf("writing to driver.mjs: %w", err)
	}
	var r nodeReply
	select {
	case r = <-ch:
	case <-time.After(60 * time.Second):
		return fmt.Errorf("driver.mjs did not answer %s within 60s; stderr:\n%s", line, n.stderr.String())
	}
	if r.Error != nil {
		return &nodeError{msg: *r.Error, code: r.Code}
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return fmt.Errorf("decoding %s: %w", r.Result, err)
		}
	}
	return nil
}

type nodeError struct{ msg, code string }

func (e *nodeError) Error() string { return "Node adapter: " + e.msg + " (" + e.code + ")" }

// call runs the Node adapter's method with args and decodes the result into
// out; a JSON null leaves out's pointer nil.
func (n *nodeAdapter) call(t testing.TB, out any, method string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	return n.do(t, map[string]any{"op": "call", "method": method, "args": args}, out)
}

// must is call that fails the test on error.
func (n *nodeAdapter) must(t testing.TB, out any, method string, args ...any) {
	t.Helper()
	if err := n.call(t, out, method, args...); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

// jsd is a time as driver.mjs revives it into a JavaScript Date.
func jsd(t time.Time) map[string]string {
	return map[string]string{"$date": t.UTC().Format("2006-01-02T15:04:05.000Z")}
}

// The records as the Node adapters return them. Ids and numbers come back
// as JSON numbers or strings (node-postgres returns BIGINT as a string).

type jsTime struct{ time.Time }

func (j *jsTime) UnmarshalJSON(b []byte) error {
	var v struct {
		Date string `json:"$date"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Date == "" {
		return fmt.Errorf("not a Date: %s", b)
	}
	t, err := time.Parse(time.RFC3339Nano, v.Date)
	j.Time = t.UTC()
	return err
}

type jsString string

func (j *jsString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*j = jsString(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("not a string or number: %s", b)
	}
	*j = jsString(n.String())
	return nil
}

type jsInt int64

func (j *jsInt) UnmarshalJSON(b []byte) error {
	var s jsString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	*j = jsInt(v)
	return err
}

type jsUser struct {
	ID            jsString `json:"id"`
	Email         *string  `json:"email"`
	EmailVerified *jsTime  `json:"emailVerified"`
	Name          *string  `json:"name"`
	Image         *string  `json:"image"`
}

type jsAccount struct {
	UserID            jsString `json:"userId"`
	Type              string   `json:"type"`
	Provider          string   `json:"provider"`
	ProviderAccountID string   `json:"providerAccountId"`
	AccessToken       *string  `json:"access_token"`
	ExpiresAt         *jsInt   `json:"expires_at"`
	IDToken           *string  `json:"id_token"`
	RefreshToken      *string  `json:"refresh_token"`
	Scope             *string  `json:"scope"`
	TokenType         *string  `json:"token_type"`
	SessionState      *string  `json:"session_state"`
}

type jsSession struct {
	SessionToken string   `json:"sessionToken"`
	UserID       jsString `json:"userId"`
	Expires      jsTime   `json:"expires"`
}

type jsSessionAndUser struct {
	Session jsSession `json:"session"`
	User    jsUser    `json:"user"`
}

type jsVerificationToken struct {
	Identifier string `json:"identifier"`
	Token      string `json:"token"`
	Expires    jsTime `json:"expires"`
}

type jsAuthenticator struct {
	CredentialID         string   `json:"credentialID"`
	UserID               jsString `json:"userId"`
	ProviderAccountID    string   `json:"providerAccountId"`
	CredentialPublicKey  string   `json:"credentialPublicKey"`
	Counter              jsInt    `json:"counter"`
	CredentialDeviceType string   `json:"credentialDeviceType"`
	CredentialBackedUp   bool     `json:"credentialBackedUp"`
	Transports           *string  `json:"transports"`
}

var errNodeNull = errors.New("the Node adapter returned null")
