package mail_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/mail"
	"github.com/authport/authport/mail/mailtest"
	"github.com/emersion/go-smtp"
)

// E-mail sign-in through an SMTP server. Here the server is a local
// go-smtp one that keeps what it receives; in production it is your mail
// relay, e.g. mail.Config{Host: "smtp.example.com", Username: "…",
// Password: os.Getenv("SMTP_PASSWORD"), From: "…"} with STARTTLS on port
// 587 (the defaults).
func ExampleSMTP() {
	inbox := &mailtest.Server{}
	srv := smtp.NewServer(inbox)
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	go srv.Serve(ln)
	defer srv.Close()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	var portN int
	fmt.Sscan(port, &portN)

	email, err := mail.SMTP(mail.Config{
		Host: host, Port: portN,
		TLS:  mail.TLSNone, // a relay on loopback; use the default, STARTTLS, elsewhere
		From: "Example <no-reply@example.com>",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := auth.New(auth.Config{
		Adapter:   memory.New(),
		Providers: []provider.Provider{email},
		Secrets:   []string{"at least 32 random bytes, e.g. AUTH_SECRET"},
		BaseURL:   "https://app.example.com/auth",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if _, err := a.StartEmailSignIn(ctx, "email", " Ada@Example.com "); err != nil {
		fmt.Println(err)
		return
	}

	m := inbox.Messages()[0]
	fmt.Println("MAIL FROM:", m.From)
	fmt.Println("RCPT TO:", m.To)
	// The user follows the link from the message: the callback route
	// passes its query to VerifyEmailSignIn.
	text, err := mailtest.Link(m.Data)
	if err != nil {
		fmt.Println(err)
		return
	}
	link, err := url.Parse(text)
	if err != nil {
		fmt.Println(err)
		return
	}
	signIn, err := a.VerifyEmailSignIn(ctx, "email", link.Query().Get("email"), link.Query().Get("token"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("signed in:", signIn.User.Email, "new user:", signIn.IsNewUser)
	// Output:
	// MAIL FROM: no-reply@example.com
	// RCPT TO: [ada@example.com]
	// signed in: ada@example.com new user: true
}

// A Sender for an e-mail provider configured by hand: an SMTP relay with
// implicit TLS (port 465) and credentials from the environment.
func ExampleNew() {
	s, err := mail.New(mail.Config{
		Host:     "smtp.example.com",
		TLS:      mail.TLSImplicit,
		Username: "apikey",
		Password: os.Getenv("SMTP_PASSWORD"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	email := provider.Email("Example <no-reply@example.com>", s.SendVerificationRequest)
	email.ID = "nodemailer" // the id Auth.js gives its SMTP provider, for a database shared with an Auth.js app
	fmt.Println(email.ID, email.From)
	// Output:
	// nodemailer Example <no-reply@example.com>
}
