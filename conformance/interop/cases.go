package interop

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// call runs the Auth.js adapter's method with args and decodes its result
// into out when out is not nil (a JSON null leaves a pointer out nil).
func (f *Fixture) call(out any, method string, args ...any) error {
	return f.Node.Do(map[string]any{"method": method, "args": args}, out)
}

// must is call that fails t on error.
func (f *Fixture) must(t *testing.T, out any, method string, args ...any) {
	t.Helper()
	if err := f.call(out, method, args...); err != nil {
		t.Fatalf("Auth.js %s: %v", method, err)
	}
}

// nodeUser creates a user through the Auth.js adapter, which may keep the
// id it is given or make its own, as Auth.js's createUser does.
func (f *Fixture) nodeUser(t *testing.T, email string, fields map[string]any) User {
	t.Helper()
	in := map[string]any{"id": Unique("ignored"), "email": email}
	for k, v := range fields {
		in[k] = v
	}
	var u *User
	f.must(t, &u, "createUser", in)
	if u == nil || u.ID == "" {
		t.Fatalf("Auth.js createUser returned %+v", u)
	}
	return *u
}

// authportUser creates a user through authport.
func (f *Fixture) authportUser(t *testing.T, email string) *core.User {
	t.Helper()
	id := Unique("go-user")
	if f.NewUserID != nil {
		id = f.NewUserID(t)
	}
	v := At(-2 * time.Hour)
	u, err := f.Adapter.CreateUser(context.Background(), core.User{ID: id, Email: email, EmailVerified: &v, Name: ptr("Grace (Go)"), Image: ptr("https://example.com/g.png")})
	if err != nil || u == nil {
		t.Fatalf("CreateUser: %v, %v", u, err)
	}
	return u
}

// nodeAccount is an account as Auth.js links it, with every token field.
func nodeAccount(userID ID, provider, pa string) map[string]any {
	return map[string]any{
		"userId": string(userID), "type": "oidc", "provider": provider, "providerAccountId": pa,
		"access_token": "ya29.a0-access-" + pa, "expires_at": 1893456000, "id_token": "eyJhbGciOi.id." + pa,
		"refresh_token": "1//refresh-" + pa, "scope": "openid email profile", "token_type": "Bearer",
		"session_state": "state-" + pa,
	}
}

// nodeAuthenticator is an authenticator as Auth.js creates it.
func nodeAuthenticator(userID ID, cred string, counter int, backedUp bool, transports string) map[string]any {
	return map[string]any{
		"credentialID": cred, "userId": string(userID), "providerAccountId": cred,
		"credentialPublicKey": "pQECAyYgASFYIK-pk-" + cred, "counter": counter,
		"credentialDeviceType": "multiDevice", "credentialBackedUp": backedUp, "transports": transports,
	}
}

func (f *Fixture) nodeWritesAuthportReads(t *testing.T) {
	ctx := context.Background()
	a := f.Adapter
	email := Unique("node") + "@example.com"
	verified := At(-time.Hour)
	nu := f.nodeUser(t, email, map[string]any{"emailVerified": Date(verified), "name": "Ada (Node)", "image": "https://example.com/ada.png"})
	checkUser := func(what string, u *core.User) {
		t.Helper()
		if u == nil {
			t.Fatalf("%s: authport found no user written by Auth.js", what)
		}
		if u.ID != string(nu.ID) || u.Email != email {
			t.Errorf("%s: id %q email %q, want %q %q", what, u.ID, u.Email, nu.ID, email)
		}
		sameStr(t, what+" name", u.Name, ptr("Ada (Node)"))
		sameStr(t, what+" image", u.Image, ptr("https://example.com/ada.png"))
		if u.EmailVerified == nil {
			t.Errorf("%s: emailVerified nil", what)
		} else {
			sameTime(t, what+" emailVerified", *u.EmailVerified, verified, time.Millisecond)
		}
	}
	u, err := a.GetUser(ctx, string(nu.ID))
	if err != nil {
		t.Fatal(err)
	}
	checkUser("getUser", u)
	u, err = a.GetUserByEmail(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	checkUser("getUserByEmail", u)

	pa := Unique("pa")
	f.must(t, nil, "linkAccount", nodeAccount(nu.ID, "google", pa))
	acc, err := a.GetAccount(ctx, pa, "google")
	if err != nil || acc == nil {
		t.Fatalf("getAccount of Auth.js's account: %v, %v", acc, err)
	}
	checkAccount(t, acc, nodeAccount(nu.ID, "google", pa))
	u, err = a.GetUserByAccount(ctx, core.AccountKey{Provider: "google", ProviderAccountID: pa})
	if err != nil {
		t.Fatal(err)
	}
	checkUser("getUserByAccount", u)
	un, err := a.UnlinkAccount(ctx, core.AccountKey{Provider: "google", ProviderAccountID: pa})
	if err != nil || un == nil || un.UserID != string(nu.ID) || !eq(un.TokenType, ptr("bearer")) {
		t.Errorf("unlinkAccount of Auth.js's account: %+v, %v", un, err)
	}
	var gone *User
	f.must(t, &gone, "getUserByAccount", map[string]any{"provider": "google", "providerAccountId": pa})
	if gone != nil {
		t.Errorf("Auth.js still finds the account authport unlinked: %+v", gone)
	}

	tok, exp := Unique("sess"), At(30*24*time.Hour)
	f.must(t, nil, "createSession", map[string]any{"sessionToken": tok, "userId": string(nu.ID), "expires": Date(exp)})
	su, err := a.GetSessionAndUser(ctx, tok)
	if err != nil || su == nil {
		t.Fatalf("getSessionAndUser of Auth.js's session: %v, %v", su, err)
	}
	if su.Session.SessionToken != tok || su.Session.UserID != string(nu.ID) {
		t.Errorf("session: %+v", su.Session)
	}
	sameTime(t, "session expires", su.Session.Expires, exp, f.ExpiresPrecision)
	checkUser("getSessionAndUser", &su.User)
	// An expired session written by Auth.js is not returned.
	old := Unique("old")
	f.must(t, nil, "createSession", map[string]any{"sessionToken": old, "userId": string(nu.ID), "expires": Date(At(-time.Minute))})
	if su, err := a.GetSessionAndUser(ctx, old); su != nil || err != nil {
		t.Errorf("expired session written by Auth.js: %v, %v; want nil, nil", su, err)
	}

	vt, vexp := Unique("vt"), At(24*time.Hour)
	f.must(t, nil, "createVerificationToken", map[string]any{"identifier": email, "token": vt, "expires": Date(vexp)})
	key := core.VerificationTokenKey{Identifier: email, Token: vt}
	v, err := a.UseVerificationToken(ctx, key)
	if err != nil || v == nil || v.Identifier != email || v.Token != vt {
		t.Fatalf("useVerificationToken of Auth.js's token: %+v, %v", v, err)
	}
	sameTime(t, "token expires", v.Expires, vexp, f.ExpiresPrecision)
	if again, err := a.UseVerificationToken(ctx, key); again != nil || err != nil {
		t.Errorf("second useVerificationToken: %+v, %v", again, err)
	}
	var nodeAgain *VerificationToken
	f.must(t, &nodeAgain, "useVerificationToken", map[string]any{"identifier": email, "token": vt})
	if nodeAgain != nil {
		t.Errorf("Auth.js used the token authport had used: %+v", nodeAgain)
	}

	// authport updates the user Auth.js made; Auth.js reads the change.
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: string(nu.ID), Name: core.Set(ptr("Ada, renamed by Go")), Image: core.Null[string]()}); err != nil {
		t.Fatalf("updateUser: %v", err)
	}
	var nu2 *User
	f.must(t, &nu2, "getUser", string(nu.ID))
	if nu2 == nil || !eq(nu2.Name, ptr("Ada, renamed by Go")) || nu2.Image != nil || nu2.EmailVerified == nil {
		t.Errorf("Auth.js reads the user authport updated as %+v", nu2)
	}
	f.nodeAuthenticatorsAuthportReads(t, nu.ID)
}

// checkAccount compares the account authport read with the one Auth.js
// linked (want, as nodeAccount makes it); token_type reads back lowercased.
func checkAccount(t *testing.T, acc *core.Account, want map[string]any) {
	t.Helper()
	if acc.UserID != want["userId"] || string(acc.Type) != want["type"] || acc.Provider != want["provider"] || acc.ProviderAccountID != want["providerAccountId"] {
		t.Errorf("account keys: %+v", acc)
	}
	for _, f := range []struct {
		name string
		got  *string
	}{
		{"access_token", acc.AccessToken}, {"id_token", acc.IDToken}, {"refresh_token", acc.RefreshToken},
		{"scope", acc.Scope}, {"session_state", acc.SessionState},
	} {
		sameStr(t, "account "+f.name, f.got, ptr(want[f.name].(string)))
	}
	if acc.ExpiresAt == nil || *acc.ExpiresAt != int64(want["expires_at"].(int)) {
		t.Errorf("account expires_at: %s", show(acc.ExpiresAt))
	}
	if !eq(acc.TokenType, ptr("bearer")) {
		t.Errorf("account token_type written by Auth.js as %q reads back as %s, want %q", "Bearer", show(acc.TokenType), "bearer")
	}
	if acc.ExpiresIn != nil || acc.AuthorizationDetails != nil {
		t.Errorf("fields Auth.js does not write read back: %v %v", acc.ExpiresIn, acc.AuthorizationDetails)
	}
}

// nodeAuthenticatorsAuthportReads has Auth.js create two authenticators
// that authport reads, lists in credential id order and counts on.
func (f *Fixture) nodeAuthenticatorsAuthportReads(t *testing.T, userID ID) {
	ctx := context.Background()
	a := f.Adapter
	if !f.NodeAuthenticators {
		if !f.Authenticators {
			if _, err := a.GetAuthenticator(ctx, "x"); !errors.Is(err, core.ErrMissingAdapterMethod) {
				t.Errorf("getAuthenticator on a store without authenticators: %v", err)
			}
		}
		return
	}
	cred := Unique("cred")
	f.must(t, nil, "createAuthenticator", nodeAuthenticator(userID, cred+"-1", 3, false, "usb,nfc"))
	f.must(t, nil, "createAuthenticator", nodeAuthenticator(userID, cred+"-2", 4, true, "internal,hybrid"))
	au, err := a.GetAuthenticator(ctx, cred+"-1")
	if err != nil || au == nil {
		t.Fatalf("getAuthenticator of Auth.js's authenticator: %v, %v", au, err)
	}
	want := core.Authenticator{CredentialID: cred + "-1", UserID: string(userID), ProviderAccountID: cred + "-1",
		CredentialPublicKey: "pQECAyYgASFYIK-pk-" + cred + "-1", Counter: 3, CredentialDeviceType: "multiDevice",
		Transports: ptr("usb,nfc")}
	if au.CredentialID != want.CredentialID || au.UserID != want.UserID || au.ProviderAccountID != want.ProviderAccountID ||
		au.CredentialPublicKey != want.CredentialPublicKey || au.Counter != want.Counter ||
		au.CredentialDeviceType != want.CredentialDeviceType || au.CredentialBackedUp {
		t.Errorf("authenticator: got %+v, want %+v", au, want)
	}
	sameStr(t, "transports", au.Transports, want.Transports)
	list, err := a.ListAuthenticatorsByUserID(ctx, string(userID))
	if err != nil || len(list) != 2 || list[0].CredentialID != cred+"-1" || list[1].CredentialID != cred+"-2" || !list[1].CredentialBackedUp {
		t.Errorf("listAuthenticatorsByUserId: %+v, %v", list, err)
	}
	if _, err := a.UpdateAuthenticatorCounter(ctx, cred+"-2", 9); err != nil {
		t.Fatal(err)
	}
	var na *Authenticator
	f.must(t, &na, "getAuthenticator", cred+"-2")
	if na == nil || na.Counter != 9 || na.CredentialPublicKey != "pQECAyYgASFYIK-pk-"+cred+"-2" {
		t.Errorf("Auth.js reads the counter authport updated as %+v", na)
	}
}

func eq[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func (f *Fixture) authportWritesNodeReads(t *testing.T) {
	ctx := context.Background()
	a := f.Adapter
	email := Unique("go") + "@example.com"
	gu := f.authportUser(t, email)
	checkUser := func(what string, u *User) {
		t.Helper()
		if u == nil {
			t.Fatalf("%s: Auth.js found no user written by authport", what)
		}
		if string(u.ID) != gu.ID || !eq(u.Email, &email) {
			t.Errorf("%s: id %q email %s, want %q %q", what, u.ID, show(u.Email), gu.ID, email)
		}
		sameStr(t, what+" name", u.Name, gu.Name)
		sameStr(t, what+" image", u.Image, gu.Image)
		if u.EmailVerified == nil {
			t.Errorf("%s: emailVerified null", what)
		} else {
			sameTime(t, what+" emailVerified", u.EmailVerified.Time, *gu.EmailVerified, time.Millisecond)
		}
	}
	var u *User
	f.must(t, &u, "getUser", gu.ID)
	checkUser("getUser", u)
	u = nil
	f.must(t, &u, "getUserByEmail", email)
	checkUser("getUserByEmail", u)

	pa := Unique("pa")
	acc := core.Account{UserID: gu.ID, Type: core.AccountTypeOAuth, Provider: "github", ProviderAccountID: pa,
		AccessToken: ptr("gho_" + pa), ExpiresAt: ptr(int64(1893456000)), IDToken: ptr("id." + pa),
		RefreshToken: ptr("ghr_" + pa), Scope: ptr("read:user user:email"), TokenType: ptr("Bearer"), SessionState: ptr("s-" + pa)}
	if _, err := a.LinkAccount(ctx, acc); err != nil {
		t.Fatalf("linkAccount: %v", err)
	}
	u = nil
	f.must(t, &u, "getUserByAccount", map[string]any{"provider": "github", "providerAccountId": pa})
	checkUser("getUserByAccount", u)
	if f.GetAccount {
		var na map[string]any
		f.must(t, &na, "getAccount", pa, "github")
		checkNodeAccount(t, "getAccount", na, acc)
	}
	var unlinked map[string]any
	f.must(t, &unlinked, "unlinkAccount", map[string]any{"provider": "github", "providerAccountId": pa})
	if f.ReturnsDeleted {
		checkNodeAccount(t, "unlinkAccount", unlinked, acc)
	}
	if got, err := a.GetAccount(ctx, pa, "github"); got != nil || err != nil {
		t.Errorf("authport still finds the account Auth.js unlinked: %+v, %v", got, err)
	}

	tok, exp := Unique("sess"), At(7*24*time.Hour)
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: tok, UserID: gu.ID, Expires: exp}); err != nil {
		t.Fatal(err)
	}
	var su *SessionAndUser
	f.must(t, &su, "getSessionAndUser", tok)
	if su == nil {
		t.Fatal("Auth.js found no session written by authport")
	}
	if su.Session.SessionToken != tok || string(su.Session.UserID) != gu.ID {
		t.Errorf("session: %+v", su.Session)
	}
	sameTime(t, "session expires", su.Session.Expires.Time, exp, f.ExpiresPrecision)
	checkUser("getSessionAndUser", &su.User)

	vt, vexp := Unique("vt"), At(time.Hour)
	if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: email, Token: vt, Expires: vexp}); err != nil {
		t.Fatal(err)
	}
	var nv *VerificationToken
	f.must(t, &nv, "useVerificationToken", map[string]any{"identifier": email, "token": vt})
	if nv == nil || nv.Identifier != email || nv.Token != vt {
		t.Fatalf("Auth.js's useVerificationToken of authport's token: %+v", nv)
	}
	sameTime(t, "token expires", nv.Expires.Time, vexp, f.ExpiresPrecision)
	if v, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: email, Token: vt}); v != nil || err != nil {
		t.Errorf("authport used the token Auth.js had used: %v, %v", v, err)
	}

	// Each side updates the user; the other reads the change, and what the
	// update did not name is kept.
	f.must(t, nil, "updateUser", map[string]any{"id": gu.ID, "name": "Grace, renamed by Node"})
	g2, err := a.GetUser(ctx, gu.ID)
	if err != nil || g2 == nil || !eq(g2.Name, ptr("Grace, renamed by Node")) || g2.Email != email || !eq(g2.Image, gu.Image) || g2.EmailVerified == nil {
		t.Errorf("authport reads the user Auth.js updated as %+v, %v", g2, err)
	}
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: gu.ID, Name: core.Set(ptr("G. Hopper"))}); err != nil {
		t.Fatal(err)
	}
	u = nil
	f.must(t, &u, "getUser", gu.ID)
	if u == nil || !eq(u.Name, ptr("G. Hopper")) || !eq(u.Image, gu.Image) || u.EmailVerified == nil {
		t.Errorf("Auth.js reads the user authport updated as %+v", u)
	}
	f.authportAuthenticatorsNodeReads(t, gu.ID)
}

// checkNodeAccount compares the account Auth.js's what returned (as JSON)
// with the one authport linked, every field of which is set; token_type
// reads back lowercased.
func checkNodeAccount(t *testing.T, what string, na map[string]any, acc core.Account) {
	t.Helper()
	if na == nil {
		t.Fatalf("Auth.js's %s found no account written by authport", what)
	}
	for k, want := range map[string]any{
		"userId": acc.UserID, "type": string(acc.Type), "provider": acc.Provider, "providerAccountId": acc.ProviderAccountID,
		"access_token": *acc.AccessToken, "id_token": *acc.IDToken, "refresh_token": *acc.RefreshToken, "scope": *acc.Scope,
		"session_state": *acc.SessionState, "token_type": "bearer", "expires_at": float64(*acc.ExpiresAt),
	} {
		if na[k] != want {
			t.Errorf("Auth.js's %s: %s is %#v, want %#v", what, k, na[k], want)
		}
	}
}

// authportAuthenticatorsNodeReads has authport create two authenticators
// that Auth.js reads, lists and counts on.
func (f *Fixture) authportAuthenticatorsNodeReads(t *testing.T, userID string) {
	if !f.NodeAuthenticators {
		return
	}
	ctx := context.Background()
	cred := Unique("cred")
	for c, transports := range map[string]*string{cred + "-b": nil, cred + "-a": ptr("usb")} {
		if _, err := f.Adapter.CreateAuthenticator(ctx, core.Authenticator{CredentialID: c, UserID: userID, ProviderAccountID: c,
			CredentialPublicKey: "pk-" + c, Counter: 5, CredentialDeviceType: "singleDevice", Transports: transports}); err != nil {
			t.Fatal(err)
		}
	}
	var na *Authenticator
	f.must(t, &na, "getAuthenticator", cred+"-a")
	if na == nil || na.CredentialID != cred+"-a" || string(na.UserID) != userID || na.ProviderAccountID != cred+"-a" ||
		na.CredentialPublicKey != "pk-"+cred+"-a" || na.Counter != 5 || na.CredentialDeviceType != "singleDevice" ||
		na.CredentialBackedUp || !eq(na.Transports, ptr("usb")) {
		t.Errorf("Auth.js reads authport's authenticator as %+v", na)
	}
	var nl []Authenticator
	f.must(t, &nl, "listAuthenticatorsByUserId", userID)
	ids := make([]string, len(nl))
	for i, x := range nl {
		if ids[i] = x.CredentialID; x.CredentialID == cred+"-b" && x.Transports != nil {
			t.Errorf("Auth.js lists authport's authenticator without transports with %s", show(x.Transports))
		}
	}
	if slices.Sort(ids); !slices.Equal(ids, []string{cred + "-a", cred + "-b"}) {
		t.Errorf("Auth.js's listAuthenticatorsByUserId: %+v", nl)
	}
	f.must(t, nil, "updateAuthenticatorCounter", cred+"-a", 6)
	if au, err := f.Adapter.GetAuthenticator(ctx, cred+"-a"); err != nil || au == nil || au.Counter != 6 {
		t.Errorf("authport reads the counter Auth.js updated as %+v, %v", au, err)
	}
	if l, err := f.Adapter.ListAuthenticatorsByUserID(ctx, userID); err != nil || len(l) != 2 {
		t.Errorf("authport lists %d authenticators after Auth.js's updateAuthenticatorCounter: %v", len(l), err)
	}
	nl = nil
	f.must(t, &nl, "listAuthenticatorsByUserId", userID)
	t.Logf("Auth.js lists %d of the user's 2 authenticators after its own updateAuthenticatorCounter", len(nl))
}
