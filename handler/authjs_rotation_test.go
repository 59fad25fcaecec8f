package handler_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/jwt/jwttest"
)

// authjsEmailIn and authjsEmailOut are testdata/authjs-email.mjs's input
// and output.
type authjsEmailIn struct {
	Secret []string      `json:"secret"`
	Action string        `json:"action"`
	Email  string        `json:"email,omitempty"`
	URL    string        `json:"url,omitempty"`
	Tokens []authjsToken `json:"tokens"`
}

type authjsToken struct {
	Identifier string `json:"identifier"`
	Token      string `json:"token"`
	Expires    string `json:"expires"`
}

type authjsEmailOut struct {
	Status   int
	Location string
	Sent     *struct{ URL, Token string }
	Session  map[string]any
	Tokens   []authjsToken
}

func authjsEmail(t *testing.T, in authjsEmailIn) authjsEmailOut {
	t.Helper()
	var out authjsEmailOut
	jwttest.RunNode(t, "", filepath.Join("testdata", "authjs-email.mjs"), filepath.Join(jwttest.AuthCore(), "index.js"), in, &out)
	return out
}

// During a secret rotation an Auth.js app given secret: [new, old] hashes
// its e-mail tokens with the secrets joined ("new,old"). authport, given
// the same secrets, accepts such a link; with AuthJSJoinedSecrets it hashes
// its own links that way, so that the Auth.js app accepts them, and
// without it the Auth.js app refuses them.
func TestAuthjsEmailLinksDuringRotation(t *testing.T) {
	const newSecret = "handler-test-new-secret-0123456789ab"
	secrets := []string{newSecret, secret}
	var ours, theirs map[string]any // each side's /session after its e-mail sign-in
	env := func(t *testing.T, joined bool, sent *[]provider.VerificationRequest) *env {
		return newEnv(t, envOpts{strategy: auth.StrategyJWT,
			providers: func(*testing.T, string) []provider.Provider {
				return []provider.Provider{provider.Email("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
					*sent = append(*sent, r)
					return nil
				})}
			},
			authConfig: func(c *auth.Config) { c.Secrets, c.AuthJSJoinedSecrets = secrets, joined }})
	}

	t.Run("Auth.js sends, authport signs in", func(t *testing.T) {
		out := authjsEmail(t, authjsEmailIn{Secret: secrets, Action: "send", Email: "ada@example.com"})
		if out.Sent == nil || len(out.Tokens) != 1 {
			t.Fatalf("Auth.js sent %+v and stored %+v; want one link and one token", out.Sent, out.Tokens)
		}
		stored := out.Tokens[0]
		if stored.Token != auth.HashToken(out.Sent.Token, newSecret+","+secret) {
			t.Fatalf("Auth.js stored %q: not the token hashed with the joined secrets, so this case tests nothing", stored.Token)
		}
		var sent []provider.VerificationRequest
		for _, joined := range []bool{false, true} { // either way authport accepts it
			e := env(t, joined, &sent)
			expires, err := time.Parse(time.RFC3339Nano, stored.Expires)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.store.CreateVerificationToken(t.Context(), core.VerificationToken{Identifier: stored.Identifier, Token: stored.Token, Expires: expires}); err != nil {
				t.Fatal(err)
			}
			q := url.Values{"token": {out.Sent.Token}, "email": {stored.Identifier}}
			res := e.get("/auth/callback/email?" + q.Encode())
			wantStatus(t, res, http.StatusFound)
			if c := setCookie(res, "authjs.session-token"); c == nil || c.Value == "" {
				t.Errorf("AuthJSJoinedSecrets=%v: no session from Auth.js's link (Location %s)", joined, res.Header.Get("Location"))
			}
			if len(e.store.Snapshot().VerificationTokens) != 0 {
				t.Errorf("AuthJSJoinedSecrets=%v: the token was not used up", joined)
			}
			ours = e.session()
		}
	})

	t.Run("authport sends, Auth.js signs in", func(t *testing.T) {
		for _, joined := range []bool{true, false} {
			var sent []provider.VerificationRequest
			e := env(t, joined, &sent)
			res := e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {"ada@example.com"}})
			wantStatus(t, res, http.StatusSeeOther)
			tokens := e.store.Snapshot().VerificationTokens
			if len(sent) != 1 || len(tokens) != 1 {
				t.Fatalf("authport sent %d links and stored %d tokens; want one of each", len(sent), len(tokens))
			}
			v := tokens[0]
			q := url.Values{"token": {sent[0].Token}, "email": {v.Identifier}}
			out := authjsEmail(t, authjsEmailIn{Secret: secrets, Action: "callback", URL: "http://localhost:3000/auth/callback/email?" + q.Encode(),
				Tokens: []authjsToken{{Identifier: v.Identifier, Token: v.Token, Expires: v.Expires.Format(time.RFC3339Nano)}}})
			accepted := out.Status == http.StatusFound && !strings.Contains(out.Location, "error=") && len(out.Tokens) == 0
			if accepted != joined {
				t.Errorf("AuthJSJoinedSecrets=%v: Auth.js answered %d to %s (tokens left %d); want accepted=%v",
					joined, out.Status, out.Location, len(out.Tokens), joined)
			}
			if accepted {
				theirs = out.Session
			}
		}
	})

	// Both JWT sessions of the same e-mail user answer /session alike: a
	// stored user's missing name and picture are null, and expires is an
	// ISO time with milliseconds.
	t.Run("same session JSON", func(t *testing.T) {
		if ours == nil || theirs == nil {
			t.Skip("a direction above failed")
		}
		for _, s := range []map[string]any{ours, theirs} {
			if exp, _ := s["expires"].(string); len(exp) != len("2006-01-02T15:04:05.000Z") {
				t.Errorf("expires %q: want an ISO time with milliseconds", exp)
			}
			delete(s, "expires")
		}
		a, _ := json.Marshal(theirs)
		b, _ := json.Marshal(ours)
		if string(a) != string(b) || !strings.Contains(string(b), `"image":null`) {
			t.Errorf("/session: Auth.js %s, authport %s; want the same, with \"image\":null", a, b)
		}
	})
}

// A JWT session re-issued by GET /session answers an expiry MaxAge from
// now to the millisecond, as Auth.js's toISOString does, though the
// token's exp keeps whole seconds; one not re-issued answers its exp.
func TestJWTSessionExpiresKeepsMilliseconds(t *testing.T) {
	zero := time.Duration(0)
	e := newEnv(t, envOpts{strategy: auth.StrategyJWT, maxAge: time.Hour, updateAge: &zero})
	wantStatus(t, e.signInCredentials("ada", "lovelace", nil), http.StatusSeeOther)
	e.clock.Add(1234 * time.Millisecond)
	want := e.clock.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
	if got := e.session()["expires"]; got != want || !strings.HasSuffix(want, ".234Z") {
		t.Errorf("re-issued session expires %v, want %s", got, want)
	}

	day := 30 * time.Minute
	e = newEnv(t, envOpts{strategy: auth.StrategyJWT, maxAge: time.Hour, updateAge: &day})
	wantStatus(t, e.signInCredentials("ada", "lovelace", nil), http.StatusSeeOther)
	issued := e.clock.Now()
	e.clock.Add(1234 * time.Millisecond)
	if got, want := e.session()["expires"], issued.Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z"); got != want {
		t.Errorf("session not re-issued: expires %v, want its exp %s", got, want)
	}
}
