package auth_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
)

// linkStore is a map-backed adapter with what an e-mail sign-in with JWT
// sessions needs: verification tokens and users (the examples' stand-in for
// adapters/memory, which core does not import).
type linkStore struct {
	mu     sync.Mutex
	tokens map[core.VerificationTokenKey]core.VerificationToken
	users  map[string]core.User
}

func newLinkStore() *linkStore {
	return &linkStore{tokens: map[core.VerificationTokenKey]core.VerificationToken{}, users: map[string]core.User{}}
}

func (s *linkStore) CreateVerificationToken(_ context.Context, v core.VerificationToken) (*core.VerificationToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[core.VerificationTokenKey{Identifier: v.Identifier, Token: v.Token}] = v
	return &v, nil
}

func (s *linkStore) UseVerificationToken(_ context.Context, k core.VerificationTokenKey) (*core.VerificationToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.tokens[k]
	if !ok {
		return nil, nil
	}
	delete(s.tokens, k)
	return &v, nil
}

func (s *linkStore) CreateUser(_ context.Context, u core.User) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
	return &u, nil
}

func (s *linkStore) GetUserByEmail(_ context.Context, email string) (*core.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if u.Email == email {
			return &u, nil
		}
	}
	return nil, nil
}

func (s *linkStore) GetUserByAccount(context.Context, core.AccountKey) (*core.User, error) {
	return nil, nil
}

func (s *linkStore) UpdateUser(context.Context, core.UserUpdate) (*core.User, error) {
	return nil, errors.New("not used by this example")
}

func (s *linkStore) LinkAccount(_ context.Context, a core.Account) (*core.Account, error) {
	return &a, nil
}

// A refused sign-in is an *auth.Error carrying its Auth.js code: the code
// the handler shows on its error page. Test for it with auth.CodeOf, or
// with errors.Is and an *auth.Error holding only the code. Here an e-mail
// link is used twice: the second use is refused with CodeVerification, as
// is a link whose token was never sent.
func ExampleCodeOf() {
	ctx := context.Background()
	var link provider.VerificationRequest
	a, err := auth.New(auth.Config{
		Adapter: newLinkStore(),
		Secrets: []string{"example-secret-0123456789abcdefghij"},
		BaseURL: "https://example.com/auth",
		Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
		Providers: []provider.Provider{provider.Email("auth@example.com", func(_ context.Context, req provider.VerificationRequest) error {
			link = req // a real provider sends req.URL by e-mail
			return nil
		})},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := a.StartEmailSignIn(ctx, "email", "ada@example.com"); err != nil {
		fmt.Println(err)
		return
	}

	in, err := a.VerifyEmailSignIn(ctx, "email", "ada@example.com", link.Token)
	fmt.Println("first use:", in != nil && in.IsNewUser, auth.CodeOf(err) == "")

	_, err = a.VerifyEmailSignIn(ctx, "email", "ada@example.com", link.Token)
	fmt.Println("second use:", auth.CodeOf(err))
	fmt.Println("errors.Is:", errors.Is(err, &auth.Error{Code: auth.CodeVerification}))

	_, err = a.VerifyEmailSignIn(ctx, "email", "ada@example.com", "never-sent")
	fmt.Println("unknown token:", auth.CodeOf(err))

	// A configuration error carries no code of its own: CodeOf reports it
	// as the server's fault, and it matches core.ErrInvalidConfig.
	_, err = auth.New(auth.Config{Adapter: newLinkStore(), Secrets: []string{"short"}})
	fmt.Println("short secret:", auth.CodeOf(err), errors.Is(err, core.ErrInvalidConfig))
	// Output:
	// first use: true true
	// second use: Verification
	// errors.Is: true
	// unknown token: Verification
	// short secret: Configuration true
}

// New parses Config.BaseURL once; the modules built on the Auth (handler,
// oauth, passkey) read the result from Settings instead of parsing it again.
func ExampleAuth_Settings() {
	a, err := auth.New(auth.Config{
		Adapter: struct{}{}, // JWT sessions without providers need no adapter method
		Secrets: []string{"example-secret-0123456789abcdefghij"},
		BaseURL: "https://example.com/api/auth/",
		Session: auth.SessionOptions{Strategy: auth.StrategyJWT},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := a.Settings()
	fmt.Println("BaseURL: ", s.BaseURL)
	fmt.Println("Origin:  ", s.Origin)
	fmt.Println("BasePath:", s.BasePath)
	fmt.Println("HTTPS:   ", s.HTTPS, "Secure cookies:", s.Cookies.Secure)
	fmt.Println("MaxAge:  ", s.Session.MaxAge)
	// Output:
	// BaseURL:  https://example.com/api/auth
	// Origin:   https://example.com
	// BasePath: /api/auth
	// HTTPS:    true Secure cookies: true
	// MaxAge:   720h0m0s
}
