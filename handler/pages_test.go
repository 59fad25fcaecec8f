package handler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/handler"
)

// Built-in providers' logos are paths ("/github.svg") that nothing serves:
// the pages omit them unless Theme.ProviderLogos says where they are.
func TestProviderLogos(t *testing.T) {
	builtins := func(*testing.T, string) []provider.Provider {
		return []provider.Provider{providers.GitHub("id", "secret"), providers.Google("id", "secret"), providers.Discord("id", "secret")}
	}
	e := newEnv(t, envOpts{providers: builtins})
	page := e.get("/auth/signin")
	wantStatus(t, page, 200)
	if strings.Contains(page.body, "<img") || strings.Contains(page.body, ".svg") {
		t.Errorf("the sign-in page shows a logo nothing serves:\n%s", page.body)
	}
	e = newEnv(t, envOpts{providers: builtins, config: func(c *handler.Config) {
		c.Theme.ProviderLogos = "https://authjs.dev/img/providers/"
	}})
	page = e.get("/auth/signin")
	if !strings.Contains(page.body, `<img src="https://authjs.dev/img/providers/github.svg"`) {
		t.Errorf("with ProviderLogos the GitHub logo is not shown from there:\n%s", page.body)
	}
}

// GET /signin/{id} shows that provider alone; an unknown one is a 404.
func TestProviderPage(t *testing.T) {
	e := newEnv(t, envOpts{providers: func(*testing.T, string) []provider.Provider {
		return []provider.Provider{providers.GitHub("id", "secret"), providers.Google("id", "secret")}
	}})
	page := e.get("/auth/signin/google")
	wantStatus(t, page, 200)
	if !strings.Contains(page.body, "<title>Sign in with Google</title>") || !strings.Contains(page.body, "Sign in with Google</span>") ||
		strings.Contains(page.body, "GitHub") || !strings.Contains(page.body, `action="`+e.base+`/signin/google" method="post"`) {
		t.Errorf("GET /signin/google:\n%s", page.body)
	}
	wantStatus(t, e.get("/auth/signin/nope"), 404)
}

// The passkey registration page says what it does: its title, one e-mail
// field, a button that creates a passkey, and options asked for
// registration.
func TestPasskeyRegistrationPage(t *testing.T) {
	pk := &contractPasskeys{}
	e := newEnv(t, envOpts{
		providers: func(*testing.T, string) []provider.Provider {
			return []provider.Provider{provider.Email("a@example.com", func(context.Context, provider.VerificationRequest) error { return nil }), provider.Passkey()}
		},
		config: func(c *handler.Config) { pk.a = c.Auth; c.Passkeys = pk },
	})
	page := e.get("/auth/signin/passkey?action=register")
	wantStatus(t, page, 200)
	for _, want := range []string{"<title>Create a passkey</title>", "<h1>Create a passkey</h1>", ">Create passkey</button>",
		`data-options-url="` + e.base + `/webauthn-options/passkey?action=register"`, `<script src="` + e.base + `/passkey.js" defer></script>`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the registration page lacks %s:\n%s", want, page.body)
		}
	}
	if n := strings.Count(page.body, `type="email"`); n != 1 || strings.Contains(page.body, "Sign in with Passkey") {
		t.Errorf("the registration page has %d e-mail fields (want 1) or a sign-in button:\n%s", n, page.body)
	}
	signin := e.get("/auth/signin")
	if !strings.Contains(signin.body, `href="`+e.base+`/signin/passkey?action=register">Create a passkey</a>`) {
		t.Errorf("the sign-in page does not link to the registration page:\n%s", signin.body)
	}
}

// The pages follow the browser's light or dark preference.
func TestPagesDarkTheme(t *testing.T) {
	e := newEnv(t, envOpts{providers: func(*testing.T, string) []provider.Provider {
		return []provider.Provider{providers.GitHub("id", "secret")}
	}})
	page := e.get("/auth/signin")
	if !strings.Contains(page.body, `<meta name="color-scheme" content="light dark">`) || !strings.Contains(page.body, "@media (prefers-color-scheme:dark)") {
		t.Errorf("no dark theme:\n%s", page.body)
	}
}
