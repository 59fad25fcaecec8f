package betterauth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/conformance/nodeproc"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
)

// suite is one row's fixture with authport's password sign-in on its
// adapter.
type suite struct {
	f *Fixture
	// auth is authport with password sign-in hashing as Better Auth does
	// (password.BetterAuthScrypt, no upgrade) and, as a Better Auth app
	// with emailAndPassword and no requireEmailVerification, letting users
	// sign in before they verify their address.
	auth *auth.Auth
	// hash is the hasher auth uses.
	hash *password.BetterAuthScrypt
}

func newSuite(t *testing.T, f *Fixture) *suite {
	t.Helper()
	h, err := password.NewBetterAuthScrypt()
	if err != nil {
		t.Fatal(err)
	}
	pc := provider.Password("auth@example.com", func(context.Context, provider.VerificationRequest) error { return nil })
	pc.Hasher = h
	pc.AllowUnverifiedSignIn = true
	cfg := auth.Config{Adapter: f.Adapter, Providers: []provider.Provider{pc}, Secrets: []string{f.Secret},
		BaseURL: "http://localhost:3000/auth", Session: auth.SessionOptions{Strategy: auth.StrategyDatabase}}
	if f.NewUserID != nil {
		cfg.GenerateUserID = func() (string, error) { return f.NewUserID(t), nil }
	}
	a, err := auth.New(cfg)
	if err != nil {
		t.Fatalf("authport with password sign-in on the preset: %v", err)
	}
	return &suite{f: f, auth: a, hash: h}
}

// call runs the Node command with args and decodes its result into out
// when out is not nil (a JSON null leaves a pointer out nil).
func (s *suite) call(out any, method string, args ...any) error {
	return s.f.Node.Do(map[string]any{"method": method, "args": args}, out)
}

// must is call that fails t on error.
func (s *suite) must(t *testing.T, out any, method string, args ...any) {
	t.Helper()
	if err := s.call(out, method, args...); err != nil {
		t.Fatalf("Better Auth %s: %v", method, err)
	}
}

// code is the status text of a refusal by Better Auth's API
// ("UNAUTHORIZED"), or "" for another error.
func code(err error) string {
	var e *nodeproc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// nodeSignUp signs a user up through Better Auth's POST /sign-up/email.
func (s *suite) nodeSignUp(t *testing.T, email, pw string, extra map[string]any) TokenAndUser {
	t.Helper()
	body := map[string]any{"email": email, "password": pw, "name": "Ada (Better Auth)"}
	for k, v := range extra {
		body[k] = v
	}
	var r TokenAndUser
	s.must(t, &r, "signUp", body)
	if r.Token == "" || r.User.ID == "" {
		t.Fatalf("Better Auth's signUpEmail answered %+v", r)
	}
	return r
}

// authportUser creates a user through authport's adapter, with an id the
// adapter makes when it makes ids.
func (s *suite) authportUser(t *testing.T, email string, fields core.User) *core.User {
	t.Helper()
	fields.Email = email
	fields.ID = Unique("go-user")
	if s.f.NewUserID != nil {
		fields.ID = s.f.NewUserID(t)
	}
	u, err := s.f.Adapter.CreateUser(context.Background(), fields)
	if err != nil || u == nil {
		t.Fatalf("CreateUser: %v, %v", u, err)
	}
	return u
}

func (s *suite) users(t *testing.T) {
	ctx := context.Background()
	a := s.f.Adapter
	t.Run("node_writes_authport_reads", func(t *testing.T) {
		email := Unique("ba") + "@example.com"
		r := s.nodeSignUp(t, email, "correct horse battery", map[string]any{"image": "https://example.com/ada.png"})
		check := func(what string, u *core.User, verified bool) {
			t.Helper()
			if u == nil {
				t.Fatalf("%s: authport found no user written by Better Auth", what)
			}
			if u.ID != string(r.User.ID) || u.Email != email || !eq(u.Name, ptr("Ada (Better Auth)")) || !eq(u.Image, ptr("https://example.com/ada.png")) {
				t.Errorf("%s: %+v; want id %q, %q, name and image", what, u, r.User.ID, email)
			}
			if (u.EmailVerified != nil) != verified {
				t.Errorf("%s: emailVerified %v, want set: %v", what, u.EmailVerified, verified)
			}
		}
		u, err := a.GetUser(ctx, string(r.User.ID))
		if err != nil {
			t.Fatal(err)
		}
		check("getUser", u, false)
		u, err = a.GetUserByEmail(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		check("getUserByEmail", u, false)
		recent(t, "Better Auth's createdAt", r.User.CreatedAt.Time)

		// Better Auth verifies the address and renames the user.
		var nu *User
		s.must(t, &nu, "updateUser", string(r.User.ID), map[string]any{"emailVerified": true, "name": "Ada Lovelace"})
		u, err = a.GetUser(ctx, string(r.User.ID))
		if err != nil || u == nil || u.EmailVerified == nil || !eq(u.Name, ptr("Ada Lovelace")) {
			t.Errorf("authport reads the user Better Auth verified and renamed as %+v, %v", u, err)
		}

		// authport changes it; Better Auth reads the change.
		if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: string(r.User.ID), Name: core.Set(ptr("Ada, renamed by Go")), Image: core.Null[string]()}); err != nil {
			t.Fatalf("updateUser: %v", err)
		}
		nu = nil
		s.must(t, &nu, "findUserById", string(r.User.ID))
		if nu == nil || nu.Name != "Ada, renamed by Go" || nu.Image != nil || !bool(nu.EmailVerified) || nu.Email != email {
			t.Errorf("Better Auth reads the user authport updated as %+v", nu)
		} else {
			sameTime(t, "createdAt after authport's update", nu.CreatedAt.Time, r.User.CreatedAt.Time, s.f.ExpiresPrecision)
			if nu.UpdatedAt.Before(r.User.UpdatedAt.Add(-s.f.ExpiresPrecision)) {
				t.Errorf("updatedAt went back at authport's update: %v, then %v", r.User.UpdatedAt, nu.UpdatedAt)
			}
		}
	})
	t.Run("authport_writes_node_reads", func(t *testing.T) {
		email := Unique("go") + "@example.com"
		verified := at(-time.Hour)
		gu := s.authportUser(t, email, core.User{EmailVerified: &verified, Name: ptr("Grace (Go)"), Image: ptr("https://example.com/g.png")})
		check := func(what string, u *User) {
			t.Helper()
			if u == nil {
				t.Fatalf("%s: Better Auth found no user written by authport", what)
			}
			if string(u.ID) != gu.ID || u.Email != email || u.Name != "Grace (Go)" || !eq(u.Image, gu.Image) || !bool(u.EmailVerified) {
				t.Errorf("%s: %+v; want %+v", what, u, gu)
			}
			recent(t, what+" createdAt", u.CreatedAt.Time)
			recent(t, what+" updatedAt", u.UpdatedAt.Time)
		}
		var u *User
		s.must(t, &u, "findUserById", gu.ID)
		check("findUserById", u)
		var byEmail *struct {
			User     User      `json:"user"`
			Accounts []Account `json:"accounts"`
		}
		s.must(t, &byEmail, "findUserByEmail", email)
		if byEmail == nil {
			t.Fatal("Better Auth's findUserByEmail found no user written by authport")
		}
		check("findUserByEmail", &byEmail.User)

		s.must(t, nil, "updateUser", gu.ID, map[string]any{"name": "Grace, renamed by Node", "emailVerified": false})
		g2, err := a.GetUser(ctx, gu.ID)
		if err != nil || g2 == nil || !eq(g2.Name, ptr("Grace, renamed by Node")) || g2.Email != email || !eq(g2.Image, gu.Image) || g2.EmailVerified != nil {
			t.Errorf("authport reads the user Better Auth updated as %+v, %v", g2, err)
		}

		// A user without a name: Better Auth's name column is NOT NULL.
		bare := s.authportUser(t, Unique("bare")+"@example.com", core.User{})
		u = nil
		s.must(t, &u, "findUserById", bare.ID)
		if u == nil || u.Name != "" || u.Image != nil || bool(u.EmailVerified) {
			t.Errorf("Better Auth reads authport's user without name, image and verification as %+v", u)
		}
		if back, err := a.GetUser(ctx, bare.ID); err != nil || back == nil || back.Name != nil {
			t.Errorf("authport reads its user without a name back as %+v, %v", back, err)
		}
	})
}

// sessionsNodeToAuthport: a session Better Auth signed in is found by
// authport with its user, extended and ended by authport, and Better Auth
// sees both.
func (s *suite) sessionsNodeToAuthport(t *testing.T) {
	ctx := context.Background()
	a := s.f.Adapter
	r := s.nodeSignUp(t, Unique("sess")+"@example.com", "correct horse battery", nil)
	var in SessionAndUser
	s.must(t, &in, "findSession", r.Token)
	su, err := a.GetSessionAndUser(ctx, r.Token)
	if err != nil || su == nil {
		t.Fatalf("authport's getSessionAndUser of Better Auth's session: %v, %v", su, err)
	}
	if su.Session.SessionToken != r.Token || su.Session.UserID != string(r.User.ID) || su.User.ID != string(r.User.ID) || su.User.Email != r.User.Email {
		t.Errorf("session and user: %+v", su)
	}
	sameTime(t, "expires", su.Session.Expires, in.Session.ExpiresAt.Time, s.f.ExpiresPrecision)
	if d := time.Until(su.Session.Expires); d < 7*24*time.Hour-time.Minute || d > 7*24*time.Hour {
		t.Errorf("Better Auth's session expires in %v, want its default 7 days", d)
	}
	if l, ok := a.(core.SessionsByUserLister); ok {
		list, err := l.ListSessionsByUserID(ctx, string(r.User.ID))
		if err != nil || len(list) != 1 || list[0].SessionToken != r.Token {
			t.Errorf("authport lists the user's sessions as %+v, %v", list, err)
		}
	}

	later := at(48 * time.Hour)
	if s2, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: r.Token, Expires: core.Set(later)}); err != nil || s2 == nil {
		t.Fatalf("authport's updateSession of Better Auth's session: %v, %v", s2, err)
	}
	var got SessionAndUser
	s.must(t, &got, "findSession", r.Token)
	sameTime(t, "expires after authport's update", got.Session.ExpiresAt.Time, later, s.f.ExpiresPrecision)
	var res struct {
		Body *SessionAndUser `json:"body"`
	}
	s.must(t, &res, "getSession", SessionCookie(s.f.Secret, r.Token), map[string]any{"disableRefresh": true})
	if res.Body == nil || string(res.Body.User.ID) != string(r.User.ID) {
		t.Errorf("Better Auth's getSession of its own cookie: %+v", res.Body)
	}

	if d, err := a.DeleteSession(ctx, r.Token); err != nil || d == nil || d.UserID != string(r.User.ID) {
		t.Fatalf("authport's deleteSession of Better Auth's session: %+v, %v", d, err)
	}
	res.Body = nil
	s.must(t, &res, "getSession", SessionCookie(s.f.Secret, r.Token))
	if res.Body != nil {
		t.Errorf("Better Auth's getSession still answers the session authport deleted: %+v", res.Body)
	}
	var sessions []Session
	s.must(t, &sessions, "listSessions", string(r.User.ID))
	if len(sessions) != 0 {
		t.Errorf("Better Auth lists %d sessions after authport deleted the only one", len(sessions))
	}
}

// sessionsAuthportToNode: a session authport created is accepted by
// Better Auth's getSession given the signed cookie, extended by it, listed
// and ended by it; an expired one is refused (and deleted by Better Auth).
func (s *suite) sessionsAuthportToNode(t *testing.T) {
	ctx := context.Background()
	a := s.f.Adapter
	gu := s.authportUser(t, Unique("gsess")+"@example.com", core.User{Name: ptr("Grace")})
	tok := Unique("g2n") + "-0123456789abcdef"
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: gu.ID, Expires: at(time.Hour),
		CreatedAt: at(0), UpdatedAt: at(0), IPAddress: "203.0.113.7", UserAgent: "Go-http-client/1.1"}); err != nil {
		t.Fatal(err)
	}
	var found *SessionAndUser
	s.must(t, &found, "findSession", tok)
	if found == nil || found.Session.Token != tok || string(found.Session.UserID) != gu.ID || string(found.User.ID) != gu.ID || found.User.Email != gu.Email {
		t.Fatalf("Better Auth's findSession of authport's session: %+v", found)
	}
	if found.Session.ID == "" {
		t.Error("authport's session has no id in Better Auth's table")
	}
	if m, ok := a.(core.SessionMetadataKeeper); ok && m.KeepsSessionMetadata() &&
		(!eq(found.Session.IPAddress, ptr("203.0.113.7")) || !eq(found.Session.UserAgent, ptr("Go-http-client/1.1"))) {
		t.Errorf("Better Auth reads authport's session metadata as ipAddress %s userAgent %s", show(found.Session.IPAddress), show(found.Session.UserAgent))
	}
	recent(t, "session createdAt", found.Session.CreatedAt.Time)
	recent(t, "session updatedAt", found.Session.UpdatedAt.Time)

	// The signed cookie, one byte changed: refused.
	bad := SessionCookie(s.f.Secret, tok)
	i := strings.LastIndex(bad, ".") + 1 // the signature's first character
	flip := "A"
	if bad[i] == 'A' {
		flip = "B"
	}
	bad = bad[:i] + flip + bad[i+1:]
	var res struct {
		Body       *SessionAndUser `json:"body"`
		SetCookies []string        `json:"setCookies"`
	}
	s.must(t, &res, "getSession", bad)
	if res.Body != nil {
		t.Errorf("Better Auth accepts a cookie with a changed signature: %+v", res.Body)
	}
	// The signed cookie: accepted, and the session (1 h left of Better
	// Auth's 7 days, past its 1 day update age) extended.
	s.must(t, &res, "getSession", SessionCookie(s.f.Secret, tok))
	if res.Body == nil || string(res.Body.User.ID) != gu.ID || res.Body.Session.Token != tok {
		t.Fatalf("Better Auth's getSession with authport's session cookie: %+v", res.Body)
	}
	if d := time.Until(res.Body.Session.ExpiresAt.Time); d < 7*24*time.Hour-time.Minute {
		t.Errorf("Better Auth's getSession extended authport's session to %v from now, want 7 days", d)
	}
	got, err := a.GetSessionAndUser(ctx, tok)
	if err != nil || got == nil {
		t.Fatalf("authport lost the session Better Auth extended: %v, %v", got, err)
	}
	sameTime(t, "expires after Better Auth's extension", got.Session.Expires, res.Body.Session.ExpiresAt.Time, s.f.ExpiresPrecision)
	var sessions []Session
	s.must(t, &sessions, "listSessions", gu.ID)
	if len(sessions) != 1 || sessions[0].Token != tok {
		t.Errorf("Better Auth lists authport's sessions as %+v", sessions)
	}

	// Better Auth signs out with the cookie: authport's session is gone.
	s.must(t, nil, "signOut", SessionCookie(s.f.Secret, tok))
	if got, err := a.GetSessionAndUser(ctx, tok); got != nil || err != nil {
		t.Errorf("authport still finds the session Better Auth signed out: %+v, %v", got, err)
	}

	// An expired session authport wrote is refused by Better Auth.
	old := Unique("old") + "-0123456789abcdef"
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: old, UserID: gu.ID, Expires: at(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	res.Body = nil
	s.must(t, &res, "getSession", SessionCookie(s.f.Secret, old))
	if res.Body != nil {
		t.Errorf("Better Auth accepts authport's expired session: %+v", res.Body)
	}

	// Better Auth ends a session authport created, by token.
	tok2 := Unique("g2n") + "-fedcba9876543210"
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok2, UserID: gu.ID, Expires: at(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	later := at(96 * time.Hour)
	var upd *Session
	s.must(t, &upd, "updateSession", tok2, map[string]any{"expiresAt": date(later)})
	if got, err := a.GetSessionAndUser(ctx, tok2); err != nil || got == nil {
		t.Errorf("authport lost the session Better Auth updated: %v, %v", got, err)
	} else {
		sameTime(t, "expires after Better Auth's updateSession", got.Session.Expires, later, s.f.ExpiresPrecision)
	}
	s.must(t, nil, "deleteSession", tok2)
	if got, err := a.GetSessionAndUser(ctx, tok2); got != nil || err != nil {
		t.Errorf("authport still finds the session Better Auth deleted: %+v, %v", got, err)
	}
}

// oauthAccounts: an OAuth account linked by either side is found by
// getUserByAccount on the other, with its tokens.
func (s *suite) oauthAccounts(t *testing.T) {
	ctx := context.Background()
	a := s.f.Adapter
	t.Run("node_links_authport_reads", func(t *testing.T) {
		r := s.nodeSignUp(t, Unique("acc")+"@example.com", "correct horse battery", nil)
		pa := Unique("pa")
		exp := time.Unix(1893456000, 0)
		s.must(t, nil, "linkAccount", map[string]any{"userId": string(r.User.ID), "providerId": "github", "accountId": pa,
			"accessToken": "gho_" + pa, "refreshToken": "ghr_" + pa, "idToken": "id." + pa, "accessTokenExpiresAt": date(exp), "scope": "read:user,user:email"})
		u, err := a.GetUserByAccount(ctx, core.AccountKey{Provider: "github", ProviderAccountID: pa})
		if err != nil || u == nil || u.ID != string(r.User.ID) {
			t.Fatalf("authport's getUserByAccount of Better Auth's account: %+v, %v", u, err)
		}
		acc, err := a.GetAccount(ctx, pa, "github")
		if err != nil || acc == nil {
			t.Fatalf("authport's getAccount of Better Auth's account: %+v, %v", acc, err)
		}
		if acc.UserID != string(r.User.ID) || acc.Type != core.AccountTypeOAuth || !eq(acc.AccessToken, ptr("gho_"+pa)) || !eq(acc.RefreshToken, ptr("ghr_"+pa)) ||
			!eq(acc.IDToken, ptr("id."+pa)) || !eq(acc.Scope, ptr("read:user,user:email")) || !eq(acc.ExpiresAt, ptr(exp.Unix())) || acc.PasswordHash != nil {
			t.Errorf("authport reads Better Auth's account as %+v", acc)
		}
		// The credential account Better Auth made at sign-up is authport's
		// password account.
		pw, err := a.GetAccount(ctx, string(r.User.ID), core.PasswordProvider)
		if err != nil || pw == nil || pw.Type != core.AccountTypeCredentials || pw.PasswordHash == nil || !strings.Contains(*pw.PasswordHash, ":") {
			t.Errorf("authport reads Better Auth's credential account as %+v, %v", pw, err)
		}
		if un, err := a.UnlinkAccount(ctx, core.AccountKey{Provider: "github", ProviderAccountID: pa}); err != nil || un == nil {
			t.Errorf("authport's unlinkAccount of Better Auth's account: %+v, %v", un, err)
		}
		var owner *struct {
			Kind string `json:"kind"`
		}
		s.must(t, &owner, "findAccountOwnerByKey", map[string]any{"providerId": "github", "accountId": pa})
		if owner != nil {
			t.Errorf("Better Auth still finds the account authport unlinked: %+v", owner)
		}
	})
	t.Run("authport_links_node_reads", func(t *testing.T) {
		gu := s.authportUser(t, Unique("gacc")+"@example.com", core.User{Name: ptr("Grace")})
		pa := Unique("pa")
		acc := core.Account{UserID: gu.ID, Type: core.AccountTypeOIDC, Provider: "google", ProviderAccountID: pa,
			AccessToken: ptr("ya29." + pa), ExpiresAt: ptr(int64(1893456000)), IDToken: ptr("eyJ.id." + pa),
			RefreshToken: ptr("1//r-" + pa), Scope: ptr("openid email profile")}
		if _, err := a.LinkAccount(ctx, acc); err != nil {
			t.Fatalf("linkAccount: %v", err)
		}
		var owner *struct {
			Kind    string  `json:"kind"`
			User    User    `json:"user"`
			Account Account `json:"account"`
		}
		s.must(t, &owner, "findAccountOwnerByKey", map[string]any{"providerId": "google", "accountId": pa})
		if owner == nil || owner.Kind != "owned" || string(owner.User.ID) != gu.ID {
			t.Fatalf("Better Auth's findAccountOwnerByKey of authport's account: %+v", owner)
		}
		na := owner.Account
		if na.ID == "" || string(na.UserID) != gu.ID || na.ProviderID != "google" || na.AccountID != pa || !eq(na.AccessToken, acc.AccessToken) ||
			!eq(na.RefreshToken, acc.RefreshToken) || !eq(na.IDToken, acc.IDToken) || !eq(na.Scope, acc.Scope) || na.Password != nil ||
			na.AccessTokenExpiresAt == nil || na.AccessTokenExpiresAt.Unix() != 1893456000 {
			t.Errorf("Better Auth reads authport's account as %+v", na)
		}
		recent(t, "account createdAt", na.CreatedAt.Time)
		var list []Account
		s.must(t, &list, "findAccounts", gu.ID)
		if len(list) != 1 || list[0].AccountID != pa {
			t.Errorf("Better Auth's findAccounts: %+v", list)
		}
		s.must(t, nil, "deleteAccount", string(na.ID))
		if got, err := a.GetAccount(ctx, pa, "google"); got != nil || err != nil {
			t.Errorf("authport still finds the account Better Auth deleted: %+v, %v", got, err)
		}
	})
}

// passwordNodeToAuthport: a password Better Auth set signs in through
// authport's Passwords.SignIn, whose session Better Auth accepts; the
// hash is not upgraded.
func (s *suite) passwordNodeToAuthport(t *testing.T) {
	ctx := context.Background()
	const pw = "Tr0ub4dor & 3, über"
	email := Unique("bapw") + "@example.com"
	r := s.nodeSignUp(t, email, pw, nil)
	before, err := s.f.Adapter.GetAccount(ctx, string(r.User.ID), core.PasswordProvider)
	if err != nil || before == nil || before.PasswordHash == nil {
		t.Fatalf("Better Auth's credential account: %+v, %v", before, err)
	}
	if _, err := s.auth.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: email, Password: pw + "!"}); err == nil {
		t.Error("authport signs in with a wrong password")
	}
	in, err := s.auth.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: strings.ToUpper(email), Password: pw})
	if err != nil {
		t.Fatalf("authport's password sign-in of Better Auth's user: %v", err)
	}
	if in.User.ID != string(r.User.ID) || in.Session.SessionToken == "" {
		t.Fatalf("sign-in: user %q session %q", in.User.ID, in.Session.SessionToken)
	}
	after, err := s.f.Adapter.GetAccount(ctx, string(r.User.ID), core.PasswordProvider)
	if err != nil || after == nil || !eq(after.PasswordHash, before.PasswordHash) {
		t.Errorf("the hash changed at authport's sign-in: %s, then %s (%v)", show(before.PasswordHash), show(after.PasswordHash), err)
	}
	var res struct {
		Body *SessionAndUser `json:"body"`
	}
	s.must(t, &res, "getSession", SessionCookie(s.f.Secret, in.Session.SessionToken), map[string]any{"disableRefresh": true})
	if res.Body == nil || string(res.Body.User.ID) != string(r.User.ID) {
		t.Errorf("Better Auth's getSession of the session authport's sign-in made: %+v", res.Body)
	}
	// Better Auth still signs in with it.
	var again TokenAndUser
	s.must(t, &again, "signIn", map[string]any{"email": email, "password": pw})
	if string(again.User.ID) != string(r.User.ID) {
		t.Errorf("Better Auth's sign-in after authport's: %+v", again)
	}
}

// passwordAuthportToNode: a password authport set at sign-up (hashed
// with BetterAuthScrypt) signs in through Better Auth's signInEmail, whose
// session authport finds.
func (s *suite) passwordAuthportToNode(t *testing.T) {
	ctx := context.Background()
	const pw = "correct horse battery staple"
	email := Unique("gopw") + "@example.com"
	up, err := s.auth.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: email}, Password: pw})
	if err != nil || up.SignIn == nil {
		t.Fatalf("authport's sign-up: %+v, %v", up, err)
	}
	uid := up.SignIn.User.ID
	err = s.call(nil, "signIn", map[string]any{"email": email, "password": "wrong " + pw})
	if c := code(err); c != "UNAUTHORIZED" {
		t.Errorf("Better Auth's signInEmail with a wrong password: %v (code %q), want UNAUTHORIZED", err, c)
	}
	var r TokenAndUser
	s.must(t, &r, "signIn", map[string]any{"email": email, "password": pw})
	if string(r.User.ID) != uid || r.Token == "" {
		t.Fatalf("Better Auth's signInEmail of authport's user: %+v", r)
	}
	su, err := s.f.Adapter.GetSessionAndUser(ctx, r.Token)
	if err != nil || su == nil || su.User.ID != uid {
		t.Errorf("authport's getSessionAndUser of Better Auth's sign-in: %+v, %v", su, err)
	}
	// Better Auth's own verifyPassword agrees with authport's hash.
	acc, err := s.f.Adapter.GetAccount(ctx, uid, core.PasswordProvider)
	if err != nil || acc == nil || acc.PasswordHash == nil {
		t.Fatalf("authport's password account: %+v, %v", acc, err)
	}
	var ok bool
	s.must(t, &ok, "verifyPassword", *acc.PasswordHash, pw)
	if !ok {
		t.Error("Better Auth's verifyPassword refuses authport's hash")
	}
	// And a hash Better Auth made verifies with authport's hasher.
	var h string
	s.must(t, &h, "hashPassword", pw)
	if ok, _, err := s.hash.Verify(ctx, h, pw); !ok || err != nil {
		t.Errorf("BetterAuthScrypt.Verify of Better Auth's hashPassword: %v, %v", ok, err)
	}
}

// verification: a verification value written by either side is found
// and used by the other, once.
func (s *suite) verification(t *testing.T) {
	ctx := context.Background()
	a := s.f.Adapter
	t.Run("node_writes_authport_uses", func(t *testing.T) {
		id, val, exp := Unique("reset-password:tok"), Unique("user"), at(time.Hour)
		var v *Verification
		s.must(t, &v, "createVerificationValue", map[string]any{"identifier": id, "value": val, "expiresAt": date(exp)})
		if v == nil || v.ID == "" && !s.f.SecondaryStorage {
			t.Fatalf("Better Auth's createVerificationValue: %+v", v)
		}
		got, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: id, Token: val})
		if err != nil || got == nil || got.Identifier != id || got.Token != val {
			t.Fatalf("authport's useVerificationToken of Better Auth's value: %+v, %v", got, err)
		}
		sameTime(t, "expires", got.Expires, exp, s.f.ExpiresPrecision)
		var again *Verification
		s.must(t, &again, "findVerificationValue", id)
		if again != nil {
			t.Errorf("Better Auth still finds the value authport used: %+v", again)
		}
	})
	t.Run("authport_writes_node_uses", func(t *testing.T) {
		id, val, exp := Unique("authport:verify-email:x"), Unique("hash"), at(2*time.Hour)
		if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: id, Token: val, Expires: exp}); err != nil {
			t.Fatal(err)
		}
		var v *Verification
		s.must(t, &v, "findVerificationValue", id)
		if v == nil || v.Identifier != id || v.Value != val {
			t.Fatalf("Better Auth's findVerificationValue of authport's token: %+v", v)
		}
		sameTime(t, "expiresAt", v.ExpiresAt.Time, exp, s.f.ExpiresPrecision)
		v = nil
		s.must(t, &v, "consumeVerificationValue", id)
		if v == nil || v.Value != val {
			t.Fatalf("Better Auth's consumeVerificationValue of authport's token: %+v", v)
		}
		if got, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: id, Token: val}); got != nil || err != nil {
			t.Errorf("authport uses the token Better Auth consumed: %+v, %v", got, err)
		}
	})
	t.Run("node_deletes_by_identifier", func(t *testing.T) {
		id := Unique("authport:reset-password:y")
		for _, val := range []string{"a", "b"} {
			if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: id, Token: val, Expires: at(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		s.must(t, nil, "deleteVerificationByIdentifier", id)
		left := 0
		for _, val := range []string{"a", "b"} {
			got, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: id, Token: val})
			if err != nil {
				t.Fatal(err)
			}
			if got != nil {
				left++
				if !s.f.DeletesOne {
					t.Errorf("authport uses token %q after Better Auth deleted its identifier: %+v", val, got)
				}
			}
		}
		if s.f.DeletesOne && left != 1 {
			t.Errorf("after Better Auth's deleteVerificationByIdentifier (one delete) of 2 values, authport used %d; want 1", left)
		}
	})
}

func authSignUp(email, pw string) auth.SignUpRequest {
	return auth.SignUpRequest{Identity: auth.Identity{Email: email}, Password: pw}
}

func authSignIn(email, pw string) auth.SignInRequest {
	return auth.SignInRequest{Identifier: email, Password: pw}
}

// endEverywhere: each side's "sign out everywhere" ends the sessions the
// other created.
func (s *suite) endEverywhere(t *testing.T) {
	ctx := context.Background()
	a := s.f.Adapter
	d, ok := a.(core.SessionsByUserDeleter)
	if !ok {
		t.Skip("the adapter has no deleteSessionsByUserId")
	}
	t.Run("authport_ends_node_sessions", func(t *testing.T) {
		email := Unique("every") + "@example.com"
		r := s.nodeSignUp(t, email, "correct horse battery", nil)
		var again TokenAndUser
		s.must(t, &again, "signIn", map[string]any{"email": email, "password": "correct horse battery"})
		n, err := d.DeleteSessionsByUserID(ctx, string(r.User.ID), again.Token)
		if err != nil || n != 1 {
			t.Errorf("authport's deleteSessionsByUserId keeping one of Better Auth's two sessions: %d, %v", n, err)
		}
		var sessions []Session
		s.must(t, &sessions, "listSessions", string(r.User.ID))
		if len(sessions) != 1 || sessions[0].Token != again.Token {
			t.Errorf("Better Auth lists %+v, want the one session kept", sessions)
		}
	})
	t.Run("node_ends_authport_sessions", func(t *testing.T) {
		gu := s.authportUser(t, Unique("gevery")+"@example.com", core.User{})
		toks := []string{Unique("e") + "-0123456789abcdef", Unique("e") + "-0123456789abcdef"}
		for _, tok := range toks {
			if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: gu.ID, Expires: at(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		s.must(t, nil, "deleteUserSessions", gu.ID)
		for _, tok := range toks {
			if su, err := a.GetSessionAndUser(ctx, tok); su != nil || err != nil {
				t.Errorf("authport finds a session after Better Auth's deleteUserSessions: %+v, %v", su, err)
			}
		}
	})
}
