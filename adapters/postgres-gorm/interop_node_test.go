package gormadapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/authport/authport/conformance/nodeproc"
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

// nodeNeed are the npm packages driver.mjs needs under interop/node_modules.
var nodeNeed = []string{
	"@auth/pg-adapter/package.json",
	"@auth/drizzle-adapter/package.json",
	"@auth/kysely-adapter/package.json",
	"drizzle-kit/package.json",
	"@libsql/client/package.json",
}

// nodeAdapter is one running driver.mjs (see conformance/nodeproc).
type nodeAdapter struct {
	*nodeproc.Proc
	// DDL is what the driver ran to create the tables.
	DDL []string
}

// checkNode skips the test (or fails it, when AUTHPORT_REQUIRE is all or
// names npm) when Node or interop/node_modules is missing, before any
// database is provisioned.
func checkNode(t *testing.T) {
	t.Helper()
	nodeproc.Check(t, "interop", nodeNeed...)
}

// startNode starts driver.mjs and opens the Node adapter; it is stopped at
// cleanup.
func startNode(t *testing.T, cfg nodeConfig) *nodeAdapter {
	t.Helper()
	n := &nodeAdapter{Proc: nodeproc.Start(t, nodeproc.Config{
		Dir: "interop", Script: "driver.mjs", NodeFlags: []string{"--expose-gc"}, Need: nodeNeed,
	})}
	var init struct{ DDL []string }
	if err := n.do(t, map[string]any{"op": "init", "config": cfg}, &init); err != nil {
		t.Fatalf("opening %s on %s in Node: %v", cfg.Adapter, cfg.Dialect, err)
	}
	n.DDL = init.DDL
	return n
}

// do sends one request and decodes its result into out (if not nil).
func (n *nodeAdapter) do(_ testing.TB, req map[string]any, out any) error {
	return n.Do(req, out)
}

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
