// Package betterauth is the Better Auth interop suite: authport's adapter
// (opened with a Better Auth preset) and a Better Auth app (better-auth from
// npm, run in a Node process through conformance/nodeproc) share one store,
// and [Run] checks, in both directions, that each side reads what the
// other wrote (users, sessions, OAuth and password accounts, verification
// values), signs in a user the other created with an e-mail address and a
// password, extends and ends a session the other created (Better Auth's
// getSession given the session cookie signed as Better Auth signs it,
// [SessionCookie]), ends all of a user's sessions, deletes a user and
// leaves nothing of it behind, and how many callers of one verification
// value raced between the sides get it.
//
// A row of the suite is small: a Go side (a [Pairing] whose Setup makes a
// fresh store, opens authport's adapter on it with the preset, starts the
// Node side with [Start] and reads the store raw for [Fixture.Leftovers])
// and a JS side, a script in a directory whose node_modules hold
// better-auth and the store's driver. The script builds betterAuth() on
// that store, creates the tables as the app would (Better Auth's
// getMigrations for SQL), and hands the instance to serveBetterAuth of
// serve-betterauth.mjs, which ships inside this package ([Start] writes it
// out and names its file: URL in [ServeEnv]):
//
//	const { serveBetterAuth } = await import(process.env.AUTHPORT_SERVE_BETTERAUTH)
//	serveBetterAuth(async (config, options) => {
//		const auth = betterAuth({ ...options, database: <the store> })
//		return { auth, close, info }
//	})
//
// The commands serve-betterauth.mjs answers call Better Auth's endpoints
// (auth.api: signUpEmail, signInEmail, getSession, signOut) and its
// internalAdapter (what those endpoints use), never the database.
//
// The package uses the standard library, core (with core/auth and
// core/password for password sign-in) and nodeproc only.
package betterauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/core"
)

// ServeEnv is the environment variable in which [Start] gives a row's
// script the file: URL of serve-betterauth.mjs to import.
const ServeEnv = "AUTHPORT_SERVE_BETTERAUTH"

//go:embed serve-betterauth.mjs
var serveBetterAuth []byte

// Pairing is one Better Auth app sharing a store with an authport adapter.
type Pairing struct {
	// Name names the row's subtest, e.g. "postgres".
	Name string
	// Setup makes a fresh store, opens authport's adapter on it and starts
	// the Node side on the same store. It runs once per [Run]; the cases
	// share what it makes, each with names of its own.
	Setup func(t *testing.T) *Fixture
}

// Fixture is one row set up: authport's adapter and a Better Auth app on
// one store.
type Fixture struct {
	// Adapter is authport's adapter, opened with the store's Better Auth
	// preset.
	Adapter core.Adapter
	// Node is the Better Auth app, started with [Start].
	Node *nodeproc.Proc
	// Secret is the app's secret, the one given to [Start]; the suite
	// signs session cookies with it as Better Auth does.
	Secret string
	// Leftovers reads the store without either side and describes what it
	// still holds of the user with the id (such as "2 sessions"); nil
	// when nothing.
	Leftovers func(t testing.TB, userID string) []string
	// NewUserID returns the id of a user authport creates; nil: a unique
	// string (authport's own ids at sign-up).
	NewUserID func(t testing.TB) string
	// ExpiresPrecision is that of the stored session and verification
	// expiry; zero means a millisecond.
	ExpiresPrecision time.Duration
	// SecondaryStorage: the app keeps its sessions and verification
	// values in secondaryStorage (Redis), not in its database. Its
	// verification values then have no id.
	SecondaryStorage bool
	// AtomicConsume: Better Auth's consumeVerificationValue is atomic
	// against authport's useVerificationToken on this store, so that
	// exactly one of many callers racing from both sides gets a value.
	// When false the race is run and its outcome logged only.
	AtomicConsume bool
	// Busy, when set, reports an error as the store's transient lock
	// failure (SQLite's SQLITE_BUSY), which the race tolerates.
	Busy func(error) bool
	// DeletesOne: Better Auth's adapter for this store deletes one
	// record where its internalAdapter deletes by a field that is not
	// unique (its MongoDB adapter's delete is a deleteOne), so that
	// deleteVerificationByIdentifier leaves all but one of the
	// identifier's values; the suite then checks that exactly one went.
	DeletesOne bool
}

// NewSecret returns a random secret for a row's app: 32 bytes, hex.
func NewSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Start starts a row's script (cfg, as for [nodeproc.Start]; the script
// calls serveBetterAuth of serve-betterauth.mjs) and opens its app with
// open, to which it adds "secret". What the script answers to the opening
// is decoded into info when info is not nil.
func Start(t *testing.T, cfg nodeproc.Config, secret string, open map[string]any, info any) *nodeproc.Proc {
	t.Helper()
	nodeproc.Check(t, cfg.Dir, cfg.Need...)
	path := filepath.Join(t.TempDir(), "serve-betterauth.mjs")
	if err := os.WriteFile(path, serveBetterAuth, 0o600); err != nil {
		t.Fatalf("writing the Node side: %v", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Env = append(append([]string{}, cfg.Env...), ServeEnv+"="+(&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String())
	p := nodeproc.Start(t, cfg)
	config := map[string]any{"secret": secret}
	for k, v := range open {
		config[k] = v
	}
	if err := p.Do(map[string]any{"method": "$open", "args": []any{config}}, info); err != nil {
		t.Fatalf("opening the Better Auth app of %s: %v", cfg.Script, err)
	}
	return p
}

// Run runs the suite on each pairing, as a subtest named after it.
func Run(t *testing.T, pairings ...Pairing) {
	for _, p := range pairings {
		t.Run(p.Name, func(t *testing.T) {
			f := p.Setup(t)
			if f.ExpiresPrecision == 0 {
				f.ExpiresPrecision = time.Millisecond
			}
			s := newSuite(t, f)
			t.Run("Users", s.users)
			t.Run("SessionsNodeToAuthport", s.sessionsNodeToAuthport)
			t.Run("SessionsAuthportToNode", s.sessionsAuthportToNode)
			t.Run("EndEverywhere", s.endEverywhere)
			t.Run("OAuthAccounts", s.oauthAccounts)
			t.Run("PasswordNodeToAuthport", s.passwordNodeToAuthport)
			t.Run("PasswordAuthportToNode", s.passwordAuthportToNode)
			t.Run("Verification", s.verification)
			t.Run("VerificationRace", s.verificationRace)
			t.Run("DeleteUser", s.deleteUser)
		})
	}
}

// SessionCookie returns the Cookie header that carries token as Better
// Auth's session cookie (better-auth.session_token, on http): the token, a
// dot and the padded base64 HMAC-SHA256 of the token under secret,
// URL-encoded as encodeURIComponent does.
func SessionCookie(secret, token string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(token))
	v := token + "." + base64.StdEncoding.EncodeToString(m.Sum(nil))
	return "better-auth.session_token=" + url.QueryEscape(v)
}

// The records as Better Auth returns them; dates come as nodeproc's
// {"$date": ...}.

// Time is a JavaScript Date.
type Time struct{ time.Time }

// UnmarshalJSON reads {"$date": "<ISO 8601>"} as a UTC time; null leaves
// the zero time. A bare ISO 8601 string is read too: Better Auth's
// listSessions from secondary storage answers the session's dates but
// expiresAt as the strings it stored.
func (j *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var d nodeproc.Date
	if err := json.Unmarshal(b, &d); err != nil || d.Date == "" {
		if json.Unmarshal(b, &d.Date) != nil || d.Date == "" {
			return fmt.Errorf("not a Date: %s", b)
		}
	}
	v, err := time.Parse(time.RFC3339Nano, d.Date)
	j.Time = v.UTC()
	return err
}

// Bool is a boolean that may come back as 0 or 1 (a TINYINT or INTEGER
// column).
type Bool bool

// UnmarshalJSON accepts true, false, 0 and 1.
func (j *Bool) UnmarshalJSON(b []byte) error {
	switch strings.Trim(string(b), `"`) {
	case "true", "1":
		*j = true
	case "false", "0", "null":
		*j = false
	default:
		return fmt.Errorf("not a boolean: %s", b)
	}
	return nil
}

// ID is an id that may come back as a JSON number.
type ID string

// UnmarshalJSON accepts a JSON string or number.
func (j *ID) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, (*string)(j))
	}
	var n json.Number
	err := json.Unmarshal(b, &n)
	*j = ID(n)
	return err
}

// User is Better Auth's user record.
type User struct {
	ID            ID      `json:"id"`
	Name          string  `json:"name"`
	Email         string  `json:"email"`
	EmailVerified Bool    `json:"emailVerified"`
	Image         *string `json:"image"`
	CreatedAt     Time    `json:"createdAt"`
	UpdatedAt     Time    `json:"updatedAt"`
}

// Session is Better Auth's session record.
type Session struct {
	ID        ID      `json:"id"`
	Token     string  `json:"token"`
	UserID    ID      `json:"userId"`
	ExpiresAt Time    `json:"expiresAt"`
	CreatedAt Time    `json:"createdAt"`
	UpdatedAt Time    `json:"updatedAt"`
	IPAddress *string `json:"ipAddress"`
	UserAgent *string `json:"userAgent"`
}

// SessionAndUser is what getSession and findSession answer.
type SessionAndUser struct {
	Session Session `json:"session"`
	User    User    `json:"user"`
}

// Account is Better Auth's account record.
type Account struct {
	ID                   ID      `json:"id"`
	AccountID            string  `json:"accountId"`
	ProviderID           string  `json:"providerId"`
	UserID               ID      `json:"userId"`
	AccessToken          *string `json:"accessToken"`
	RefreshToken         *string `json:"refreshToken"`
	IDToken              *string `json:"idToken"`
	AccessTokenExpiresAt *Time   `json:"accessTokenExpiresAt"`
	Scope                *string `json:"scope"`
	Password             *string `json:"password"`
	CreatedAt            Time    `json:"createdAt"`
	UpdatedAt            Time    `json:"updatedAt"`
}

// Verification is Better Auth's verification record.
type Verification struct {
	ID         ID     `json:"id"`
	Identifier string `json:"identifier"`
	Value      string `json:"value"`
	ExpiresAt  Time   `json:"expiresAt"`
}

// TokenAndUser is what signUpEmail and signInEmail answer.
type TokenAndUser struct {
	Token string `json:"token"`
	User  User   `json:"user"`
}

var seq atomic.Int64

// Unique returns prefix with a suffix unique within the test run.
func Unique(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10) + "-" + strconv.FormatInt(seq.Add(1), 10)
}

// date is t as the Node side gets it.
func date(t time.Time) nodeproc.Date { return nodeproc.DateOf(t) }

func ptr[T any](v T) *T { return &v }

// at returns the time d from now with sub-millisecond digits, in a zone
// other than UTC, as callers pass times.
func at(d time.Duration) time.Time {
	return time.Now().Add(d).Truncate(time.Millisecond).Add(456 * time.Microsecond).In(time.FixedZone("X", 3600))
}

// sameTime fails t unless got is want, as stored, within precision.
func sameTime(t *testing.T, what string, got, want time.Time, precision time.Duration) {
	t.Helper()
	if d := got.Sub(core.NormalizeTime(want)).Abs(); d >= precision {
		t.Errorf("%s: got %v, want %v (precision %v)", what, got, core.NormalizeTime(want), precision)
	}
}

// recent fails t unless v is within a minute of now.
func recent(t *testing.T, what string, v time.Time) {
	t.Helper()
	if d := time.Since(v).Abs(); d > time.Minute {
		t.Errorf("%s: %v is not within a minute of now", what, v)
	}
}

func eq[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprintf("%q", fmt.Sprint(*p))
}
