package memory_test

import (
	"context"
	"fmt"
	"net/url"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// An e-mail sign-in from the link to the session lookup, with the memory
// adapter as the store.
func Example_emailSignIn() {
	ctx := context.Background()
	var link string
	email := provider.Email("auth@example.com", func(_ context.Context, req provider.VerificationRequest) error {
		link = req.URL // a real application e-mails it
		return nil
	})
	a, err := auth.New(auth.Config{
		Adapter:   memory.New(),
		Providers: []provider.Provider{email},
		Secrets:   []string{"at least 32 random bytes, e.g. AUTH_SECRET"},
		BaseURL:   "https://example.com/auth",
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	if _, err := a.StartEmailSignIn(ctx, "email", " Ada@Example.com "); err != nil {
		fmt.Println(err)
		return
	}
	// The user follows the link; the callback reads its parameters.
	u, _ := url.Parse(link)
	q := u.Query()
	in, err := a.VerifyEmailSignIn(ctx, "email", q.Get("email"), q.Get("token"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("signed in:", in.User.Email, "new user:", in.IsNewUser)

	// Later requests find the session through the cookie's token.
	su, _, err := a.Session(ctx, in.Session.SessionToken)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("session of:", su.User.Email)

	// The link works once.
	_, err = a.VerifyEmailSignIn(ctx, "email", q.Get("email"), q.Get("token"))
	fmt.Println(err)
	// Output:
	// signed in: ada@example.com new user: true
	// session of: ada@example.com
	// e-mail sign-in link is invalid, expired or already used
}
