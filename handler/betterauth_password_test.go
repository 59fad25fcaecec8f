package handler_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/jwt/jwttest"
)

// baHunter22 is the hash Better Auth 1.7.25's own hashPassword wrote for
// "hunter22" (core/password/testdata/betterauth-scrypt.json, case "short").
const baHunter22 = "870a36e8e239d61d434c4925d388a38b:ccbfce162d483647f5f6c58865463c6c091b974e179bce8a9c17a1a9a96c8b9c4f3a03e541105b81ecfe37e93795e018a6adbcae51c1a0685857890f703e9559"

// testArgon2id is a cheap Argon2id for tests.
func testArgon2id(t testing.TB) *password.Argon2id {
	t.Helper()
	h, err := password.NewArgon2id(password.Argon2idParams{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func newBAScrypt(t testing.TB) *password.BetterAuthScrypt {
	t.Helper()
	s, err := password.NewBetterAuthScrypt()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// seedPasswordUser stores a verified user with a password account holding
// hash, as Better Auth keeps it (provider "credential", the account id
// the user's id).
func seedPasswordUser(t *testing.T, fx *pwFixture, id, email, hash string) {
	t.Helper()
	ctx := context.Background()
	verified := time.Now().UTC().Truncate(time.Millisecond)
	if _, err := fx.store.CreateUser(ctx, core.User{ID: id, Email: email, EmailVerified: &verified}); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.store.LinkAccount(ctx, core.Account{UserID: id, Provider: core.PasswordProvider, Type: core.AccountTypeCredentials,
		ProviderAccountID: id, PasswordHash: &hash}); err != nil {
		t.Fatal(err)
	}
}

// storedHash is the hash in the user's password account.
func storedHash(t *testing.T, fx *pwFixture, userID string) string {
	t.Helper()
	acc, err := fx.store.GetAccount(context.Background(), userID, core.PasswordProvider)
	if err != nil || acc == nil || acc.PasswordHash == nil {
		t.Fatalf("the password account of %s: %+v, %v", userID, acc, err)
	}
	return *acc.PasswordHash
}

// A user whose password account holds a hash Better Auth wrote signs in
// through core/auth's password sign-in, on the memory adapter. The hash is
// kept unless the application asked for the upgrade (then it becomes
// Argon2id and the next sign-in reads that); with Better Auth's scrypt as
// the hasher it is kept, and a changed password is hashed Better Auth's
// way.
func TestBetterAuthHashSignsInThroughAuthport(t *testing.T) {
	ctx := context.Background()
	ba := newBAScrypt(t)
	cases := []struct {
		name     string
		hasher   password.Hasher
		upgraded bool
	}{
		{"Argon2id, Better Auth's hashes kept", password.WithVerifiers(testArgon2id(t), ba.Verifier()), false},
		{"Argon2id, Better Auth's hashes upgraded", password.WithVerifiers(testArgon2id(t), password.Upgrade(ba.Verifier())), true},
		{"Better Auth's scrypt", ba, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newPWFixture(t, c.hasher)
			seedPasswordUser(t, fx, "u-ada", "ada@example.com", baHunter22)

			if _, err := fx.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "ada@example.com", Password: "hunter23"}); auth.CodeOf(err) != auth.CodeCredentialsSignin {
				t.Fatalf("a wrong password: %v; want CredentialsSignin", err)
			}
			if got := storedHash(t, fx, "u-ada"); got != baHunter22 {
				t.Fatalf("a refused sign-in changed the hash to %q", got)
			}
			in, err := fx.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "ADA@example.com", Password: "hunter22"})
			if err != nil || in.User.ID != "u-ada" || in.Session.SessionToken == "" {
				t.Fatalf("SignIn with Better Auth's hash: %+v, %v", in, err)
			}
			after := storedHash(t, fx, "u-ada")
			switch {
			case c.upgraded && !strings.HasPrefix(after, "$argon2id$v=19$"):
				t.Fatalf("upgrade asked: the hash is %q, want Argon2id's", after)
			case !c.upgraded && after != baHunter22:
				t.Fatalf("no upgrade asked: the hash became %q", after)
			}
			// The next sign-in reads whatever is stored now.
			if _, err := fx.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "ada@example.com", Password: "hunter22"}); err != nil {
				t.Fatalf("the second sign-in: %v", err)
			}
			if again := storedHash(t, fx, "u-ada"); again != after {
				t.Fatalf("the second sign-in changed the hash again: %q → %q", after, again)
			}

			// A change hashes with the main hasher: Better Auth's format
			// only when that is the hasher.
			if err := fx.a.Passwords().Change(ctx, "u-ada", in.Session.SessionToken, "hunter22", "a new password"); err != nil {
				t.Fatalf("Change: %v", err)
			}
			changed := storedHash(t, fx, "u-ada")
			if _, isBA := c.hasher.(*password.BetterAuthScrypt); isBA != ba.Verifier().Recognizes(changed) {
				t.Fatalf("after a change the hash is %q; Better Auth's form wanted: %v", changed, isBA)
			}
		})
	}
}

// A table of authport's Argon2id hashes that a Better Auth app comes to
// share: with Better Auth's scrypt as the hasher and Argon2id's Verifier
// behind it, a user signs in with their Argon2id hash, which becomes
// Better Auth's (readable by the app) at that sign-in.
func TestArgon2idHashBecomesBetterAuths(t *testing.T) {
	ctx := context.Background()
	argon := testArgon2id(t)
	old, err := argon.Hash(ctx, "hunter22")
	if err != nil {
		t.Fatal(err)
	}
	ba := newBAScrypt(t)
	fx := newPWFixture(t, password.WithVerifiers(ba, argon.Verifier()))
	seedPasswordUser(t, fx, "u-bo", "bo@example.com", old)
	if _, err := fx.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "bo@example.com", Password: "hunter22"}); err != nil {
		t.Fatalf("SignIn with an Argon2id hash: %v", err)
	}
	now := storedHash(t, fx, "u-bo")
	if !ba.Verifier().Recognizes(now) {
		t.Fatalf("after sign-in the hash is %q; want Better Auth's", now)
	}
	if _, err := fx.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "bo@example.com", Password: "hunter22"}); err != nil || storedHash(t, fx, "u-bo") != now {
		t.Fatalf("the second sign-in: %v (hash kept: %v)", err, storedHash(t, fx, "u-bo") == now)
	}
}

// baPasswordApp is betterauth-app.mjs's answer with the account rows.
type baPasswordApp struct {
	Answers []struct {
		Status int
		Body   string
	}
	DB struct {
		User    []baUser
		Account []struct {
			ID, AccountID, ProviderID, UserID string
			Password                          *string
		}
	}
}

// runBetterAuthNode runs a script of testdata with better-auth installed
// in interop/betterauth, skipping (or failing, with AUTHPORT_REQUIRE=npm or
// all) when it is not.
func runBetterAuthNode(t *testing.T, script string, in, out any) {
	t.Helper()
	need, err := filepath.Abs(filepath.Join("interop", "betterauth", "node_modules", "better-auth", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(need); err != nil {
		why := "better-auth is not installed: run npm ci in handler/interop/betterauth"
		for name := range strings.SplitSeq(os.Getenv("AUTHPORT_REQUIRE"), ",") {
			if name = strings.ToLower(strings.TrimSpace(name)); name == "all" || name == "npm" {
				t.Fatalf("%s (AUTHPORT_REQUIRE=%s)", why, os.Getenv("AUTHPORT_REQUIRE"))
			}
		}
		t.Skip(why)
	}
	jwttest.RunNode(t, "", filepath.Join("testdata", script), need, in, out)
}

// A password set in Better Auth signs in through authport, and one set
// through authport (with Better Auth's scrypt as its hasher) signs in
// through Better Auth's own /sign-in/email; Better Auth's verifyPassword
// reads the Go hasher's hashes and the Go hasher reads its hashPassword's,
// for passwords that NFKC changes too. A hash authport upgraded to
// Argon2id no longer signs in through Better Auth.
func TestBetterAuthPasswordsBothWays(t *testing.T) {
	ctx := context.Background()
	ba := newBAScrypt(t)
	// Typed one way, NFKC-equal to the other way.
	const (
		baPassword   = "\ufb01nance cafe\u0301 \u2460\u2461\u2462" // ﬁ ligature, combining accent, circled digits
		baPasswordAs = "finance caf\u00e9 123"
		goPassword   = "\uff47\uff4f \u00fcber s\u00e9cret \U0001f511"
		goPasswordAs = "go u\u0308ber se\u0301cret \U0001f511"
	)

	// authport signs a user up, hashing Better Auth's way.
	goFx := newPWFixture(t, ba)
	if _, err := goFx.a.Passwords().SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "lin@example.com"}, Password: goPassword}); err != nil {
		t.Fatal(err)
	}
	lin, err := goFx.store.GetUserByEmail(ctx, "lin@example.com")
	if err != nil || lin == nil {
		t.Fatalf("the user authport signed up: %v, %v", lin, err)
	}
	goHash := storedHash(t, goFx, lin.ID)
	if !ba.Verifier().Recognizes(goHash) {
		t.Fatalf("authport stored %q, not Better Auth's form", goHash)
	}
	// A user whose Better Auth hash authport upgraded at sign-in.
	upFx := newPWFixture(t, password.WithVerifiers(testArgon2id(t), password.Upgrade(ba.Verifier())))
	seedPasswordUser(t, upFx, "u-up", "up@example.com", baHunter22)
	if _, err := upFx.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "up@example.com", Password: "hunter22"}); err != nil {
		t.Fatal(err)
	}
	upgraded := storedHash(t, upFx, "u-up")

	now := time.Now().UTC().Format(time.RFC3339Nano)
	seed := func(id, email, hash string) map[string][]any {
		return map[string][]any{
			"user":    {map[string]any{"id": id, "email": email, "name": email, "emailVerified": true, "createdAt": now, "updatedAt": now}},
			"account": {map[string]any{"id": "acc-" + id, "accountId": id, "providerId": "credential", "userId": id, "password": hash, "createdAt": now, "updatedAt": now}},
		}
	}
	signIn := func(email, pw string) baAppReq {
		return baAppReq{Method: "POST", Path: "/sign-in/email", Body: map[string]any{"email": email, "password": pw}}
	}
	const baSecret = "better-auth-app-secret-0123456789abcdef"
	apps := []baAppIn{
		// 0: Better Auth signs a user up.
		{Secret: baSecret, BaseURL: "http://localhost:3000", Requests: []baAppReq{
			{Method: "POST", Path: "/sign-up/email", Body: map[string]any{"email": "grace@example.com", "password": baPassword, "name": "Grace"}},
		}},
		// 1: the user authport signed up, in Better Auth's tables.
		{Secret: baSecret, BaseURL: "http://localhost:3000", Seed: seed(lin.ID, "lin@example.com", goHash), Requests: []baAppReq{
			signIn("lin@example.com", goPassword),
			signIn("lin@example.com", goPasswordAs),
			signIn("lin@example.com", goPassword+"!"),
		}},
		// 2: the user whose hash authport upgraded.
		{Secret: baSecret, BaseURL: "http://localhost:3000", Seed: seed("u-up", "up@example.com", upgraded), Requests: []baAppReq{
			signIn("up@example.com", "hunter22"),
		}},
	}
	var out []baPasswordApp
	runBetterAuthNode(t, "betterauth-app.mjs", apps, &out)
	if len(out) != len(apps) {
		t.Fatalf("betterauth-app.mjs answered %d apps of %d", len(out), len(apps))
	}
	for i := range apps {
		if len(out[i].Answers) != len(apps[i].Requests) {
			t.Fatalf("app %d: %d answers to %d requests", i, len(out[i].Answers), len(apps[i].Requests))
		}
	}

	// Better Auth → authport.
	if a := out[0].Answers[0]; a.Status != 200 || len(out[0].DB.Account) != 1 || out[0].DB.Account[0].Password == nil {
		t.Fatalf("Better Auth's sign-up: %d %s, accounts %+v", a.Status, a.Body, out[0].DB.Account)
	}
	acc, grace := out[0].DB.Account[0], out[0].DB.User[0]
	if acc.ProviderID != "credential" || acc.AccountID != grace.ID || !ba.Verifier().Recognizes(*acc.Password) {
		t.Fatalf("Better Auth's password account: %+v", acc)
	}
	baHash := *acc.Password
	for _, keep := range []bool{true, false} {
		v := ba.Verifier()
		if !keep {
			v = password.Upgrade(v)
		}
		fx := newPWFixture(t, password.WithVerifiers(testArgon2id(t), v))
		seedPasswordUser(t, fx, grace.ID, grace.Email, baHash)
		for _, pw := range []string{baPassword, baPasswordAs} {
			if _, err := fx.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "grace@example.com", Password: pw}); err != nil {
				t.Errorf("keep %v: Better Auth's password %q through authport: %v", keep, pw, err)
			}
		}
		if _, err := fx.a.Passwords().SignIn(ctx, auth.SignInRequest{Identifier: "grace@example.com", Password: baPasswordAs + "4"}); auth.CodeOf(err) != auth.CodeCredentialsSignin {
			t.Errorf("keep %v: a wrong password: %v", keep, err)
		}
		if got := storedHash(t, fx, grace.ID); (got == baHash) != keep {
			t.Errorf("keep %v: the stored hash is now %q", keep, got)
		}
	}

	// authport → Better Auth.
	for i, want := range []int{200, 200, 401} {
		if a := out[1].Answers[i]; a.Status != want {
			t.Errorf("Better Auth's sign-in %d with authport's hash: %d %s; want %d", i, a.Status, a.Body, want)
		}
	}
	if a := out[1].Answers[0]; !strings.Contains(a.Body, lin.ID) {
		t.Errorf("Better Auth signed in someone else: %s", a.Body)
	}
	// Better Auth reads only its own form: the upgraded user no longer
	// signs in there (its verifyPassword throws "Invalid password hash",
	// and the sign-in answers 500).
	if a := out[2].Answers[0]; a.Status != 500 {
		t.Errorf("Better Auth's sign-in with an Argon2id hash: %d %s; want 500", a.Status, a.Body)
	}

	// The hashing functions themselves, on passwords NFKC changes.
	pws := []string{"hunter22", baPassword, goPassword, "\ufdfa", "tab\there", "x"}
	var goHashes []string
	for _, pw := range pws {
		h, err := ba.Hash(ctx, pw)
		if err != nil {
			t.Fatal(err)
		}
		goHashes = append(goHashes, h)
	}
	type pair struct {
		Hash     string `json:"hash"`
		Password string `json:"password"`
	}
	var verify []pair
	for i, pw := range pws {
		verify = append(verify, pair{goHashes[i], pw}, pair{goHashes[i], pw + "x"})
	}
	var crypto struct {
		Version  string
		Hashes   []string
		Verified []any
	}
	runBetterAuthNode(t, "betterauth-password.mjs", map[string]any{"hash": pws, "verify": verify}, &crypto)
	if crypto.Version != "1.7.25" || len(crypto.Hashes) != len(pws) || len(crypto.Verified) != len(verify) {
		t.Fatalf("betterauth-password.mjs answered %+v", crypto)
	}
	for i, got := range crypto.Verified {
		if want := i%2 == 0; got != want {
			t.Errorf("Better Auth's verifyPassword(Go's hash of %q, %q) = %v; want %v", pws[i/2], verify[i].Password, got, want)
		}
	}
	for i, h := range crypto.Hashes {
		if ok, rehash, err := ba.Verify(ctx, h, pws[i]); !ok || rehash || err != nil {
			t.Errorf("Verify(Better Auth's hashPassword(%q)) = %v, %v, %v", pws[i], ok, rehash, err)
		}
	}
	if ok, _, err := ba.Verify(ctx, crypto.Hashes[1], pws[1]+"x"); ok || err != nil {
		t.Errorf("Verify(Better Auth's hash of %q, a wrong password) = %v, %v", pws[1], ok, err)
	}
}
