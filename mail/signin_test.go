package mail_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/url"
	"regexp"
	"testing"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/mail"
	"github.com/authport/authport/mail/mailtest"
)

var linkRe = regexp.MustCompile(`(?m)^https://\S+$`)

// The whole e-mail sign-in: core/auth makes the link, the SMTP sender
// delivers it to a real SMTP server over STARTTLS, the link is read from
// the delivered message, and following it signs the user in.
func TestEmailSignInEndToEnd(t *testing.T) {
	serverTLS, roots := testCert(t)
	srv := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password, TLS: serverTLS})
	p, err := mail.SMTP(mail.Config{Host: srv.Host, Port: srv.Port, Username: "mailer", Password: password,
		TLSConfig: &tls.Config{RootCAs: roots}, From: from})
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	a, err := auth.New(auth.Config{Adapter: store, Providers: []provider.Provider{p}, Secrets: []string{"a-long-random-secret-0123456789a"},
		BaseURL: "https://app.example.com/auth"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// What the user typed: core/auth trims and lowercases it before the
	// sender sees it.
	if _, err := a.StartEmailSignIn(ctx, "email", "  Ada.Lovelace@Example.COM "); err != nil {
		t.Fatal(err)
	}
	m := onlyMail(t, srv)
	if len(m.To) != 1 || m.To[0] != "ada.lovelace@example.com" || m.From != "no-reply@acme.example" || !m.TLS {
		t.Fatalf("envelope %q -> %q (TLS %v), want the normalised address over TLS", m.From, m.To, m.TLS)
	}
	msg := parse(t, m.Data)
	links := linkRe.FindAllString(msg.Text, -1)
	if len(links) != 1 {
		t.Fatalf("text part holds %d links, want 1:\n%s", len(links), msg.Text)
	}
	checkContent(t, msg, links[0])
	u, err := url.Parse(links[0])
	if err != nil || u.Host != "app.example.com" || u.Path != "/auth/callback/email" {
		t.Fatalf("link %q is not the e-mail callback", links[0])
	}
	q := u.Query()
	if q.Get("email") != "ada.lovelace@example.com" || q.Get("token") == "" {
		t.Fatalf("link query = %v", q)
	}

	// Following the link: the callback hands the query to VerifyEmailSignIn.
	signIn, err := a.VerifyEmailSignIn(ctx, "email", q.Get("email"), q.Get("token"))
	if err != nil {
		t.Fatal(err)
	}
	if !signIn.IsNewUser || signIn.User.Email != "ada.lovelace@example.com" || signIn.User.EmailVerified == nil || signIn.Session.SessionToken == "" {
		t.Errorf("sign-in = %+v", signIn)
	}
	su, err := store.GetSessionAndUser(ctx, signIn.Session.SessionToken)
	if err != nil || su == nil || su.User.ID != signIn.User.ID {
		t.Errorf("stored session = %+v, %v", su, err)
	}
	acct, err := store.GetUserByAccount(ctx, core.AccountKey{Provider: "email", ProviderAccountID: "ada.lovelace@example.com"})
	if err != nil || acct == nil || acct.ID != signIn.User.ID {
		t.Errorf("e-mail account's user = %+v, %v", acct, err)
	}

	// The link works once.
	if _, err := a.VerifyEmailSignIn(ctx, "email", q.Get("email"), q.Get("token")); auth.CodeOf(err) != auth.CodeVerification {
		t.Errorf("second use: err = %v, want ErrVerificationFailed", err)
	}
}

// When the server refuses the message, StartEmailSignIn says so and the
// caller can tell the user; nobody is signed in.
func TestEmailSignInDeliveryFailure(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{RejectRcpt: "ada@example.com"})
	p, err := mail.SMTP(mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSNone, From: from})
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{p}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, BaseURL: "https://app.example.com/auth"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.StartEmailSignIn(context.Background(), "email", "Ada@example.com")
	if !errors.Is(err, mail.ErrRecipientRejected) || !errors.Is(err, provider.ErrEmailDelivery) {
		t.Fatalf("err = %v, want ErrRecipientRejected", err)
	}
}
