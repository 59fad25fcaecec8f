package handlersec

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/authport/authport/core/auth"
)

// TestSignUpUsernameProbeTellsNoAddress is the security review's probe:
// sign up with {address, username}, then with {username} alone. Before
// the fix the second answered ErrUsernameTaken for a new address (its
// user held the username) and succeeded for a taken one (the username was
// never written): it told whether the address had an account. Both paths
// must answer alike, at the probe and at every later request on the name.
func TestSignUpUsernameProbeTellsNoAddress(t *testing.T) {
	ctx := context.Background()
	f := newSecFixture(t, auth.StrategyDatabase, nil)
	pw := f.a.Passwords()
	const taken = "owner@example.com"
	if _, err := pw.SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: taken}, Password: "owner-pass-123"}); err != nil {
		t.Fatal(err)
	}
	probe := func(email, name string) (first, second string) {
		res, err := pw.SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: email, Username: name}, Password: "probe-pass-123"})
		if err != nil || !res.VerificationSent || res.SignIn != nil {
			t.Fatalf("sign-up with %s and %s: %+v, %v; want VerificationSent", email, name, res, err)
		}
		again, err := pw.SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Username: name}, Password: "probe-pass-123"})
		if err != nil {
			return "refused", outcome(err)
		}
		return "accepted", outcome(nil) + signedIn(again)
	}
	newFirst, newSecond := probe("fresh@example.com", "probe-new")
	takenFirst, takenSecond := probe(taken, "probe-taken")
	if newFirst != takenFirst || newSecond != takenSecond {
		t.Fatalf("the probe tells the addresses apart: new address → %s (%s), taken address → %s (%s)", newFirst, newSecond, takenFirst, takenSecond)
	}
	// Both now hold a taken username: a sign-up with an address and either
	// name is refused alike, before anything else.
	for _, name := range []string{"probe-new", "probe-taken"} {
		_, err := pw.SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: "third@example.com", Username: name}, Password: "probe-pass-123"})
		if !errors.Is(err, auth.ErrUsernameTaken) {
			t.Errorf("sign-up with the taken username %s: %v; want ErrUsernameTaken", name, err)
		}
	}
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return string(auth.CodeOf(err)) + ": " + err.Error()
}

func signedIn(res *auth.SignUpResult) string {
	if res != nil && res.SignIn != nil {
		return " signed in"
	}
	return " not signed in"
}

// TestVerificationGivesTheSignUpUsername: the username chosen beside the
// address travels in the verification e-mail (the link's username
// parameter), bound into its token and code: another username verifies
// nothing, the one carried is given at verification, and one taken in the
// meantime leaves the user verified and signed in without it, saying so.
func TestVerificationGivesTheSignUpUsername(t *testing.T) {
	ctx := context.Background()
	f := newSecFixture(t, auth.StrategyDatabase, nil)
	pw := f.a.Passwords()
	signUp := func(email, name string) (token, code string) {
		t.Helper()
		n := len(f.mailList())
		if _, err := pw.SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Email: email, Username: name}, Password: "user-pass-123", Binding: "b-" + name}); err != nil {
			t.Fatal(err)
		}
		if u, _ := f.store.GetUserByUsername(ctx, name); u != nil {
			t.Fatalf("the sign-up stored the username %s before the address was verified", name)
		}
		m := f.mailList()[n]
		link, err := url.Parse(m.URL)
		if err != nil || link.Query().Get("username") != name || link.Query().Get("token") != m.Token {
			t.Fatalf("verification link %q: want its token and username=%s", m.URL, name)
		}
		return m.Token, m.Code
	}

	// The code, with the username carried, and a changed one.
	_, code := signUp("ada@example.com", "ada")
	for _, other := range []string{"", "mallory", "not a name"} {
		if _, err := pw.VerifyEmail(ctx, "ada@example.com", auth.Proof{Code: code, Binding: "b-ada", Username: other}); auth.CodeOf(err) != auth.CodeVerification {
			t.Errorf("the code with username %q: %v; want Verification", other, err)
		}
	}
	si, err := pw.VerifyEmail(ctx, "ada@example.com", auth.Proof{Code: code, Binding: "b-ada", Username: "ada"})
	if err != nil || si.User.Username != "ada" || si.User.EmailVerified == nil || si.UsernameTaken {
		t.Fatalf("the code with its username: %+v, %v; want a verified sign-in holding ada", si, err)
	}
	if u, _ := f.store.GetUserByUsername(ctx, "ada"); u == nil || u.ID != si.User.ID {
		t.Errorf("after verifying, the username ada names %+v; want the user", u)
	}

	// The link (confirmed by the sign-up's browser), with a changed
	// username and then the one carried, taken meanwhile.
	token, _ := signUp("bob@example.com", "bob")
	if _, err := pw.VerifyEmail(ctx, "bob@example.com", auth.Proof{Token: token, Binding: "b-bob", Username: "bobby"}); auth.CodeOf(err) != auth.CodeVerification {
		t.Errorf("the link with another username: %v; want Verification", err)
	}
	if _, err := pw.SignUp(ctx, auth.SignUpRequest{Identity: auth.Identity{Username: "bob"}, Password: "other-pass-123"}); err != nil {
		t.Fatalf("another user taking bob before the address is verified: %v", err)
	}
	si, err = pw.VerifyEmail(ctx, "bob@example.com", auth.Proof{Token: token, Binding: "b-bob", Username: "bob"})
	if err != nil || !si.UsernameTaken || si.User.Username != "" || si.User.EmailVerified == nil {
		t.Fatalf("the link whose username was taken meanwhile: %+v, %v; want a verified sign-in without it, UsernameTaken", si, err)
	}
	if u, _ := f.store.GetUser(ctx, si.User.ID); u == nil || u.EmailVerified == nil || u.Username != "" {
		t.Errorf("stored user after verifying: %+v; want verified, no username", u)
	}
}
