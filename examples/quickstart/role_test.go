package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bboltadapter "github.com/authport/authport/adapters/bbolt"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/handler"
)

// Role is the application's own field on users. The lines between the
// README markers are the README's "A role on the user" block, which
// TestReadmeRole keeps equal to them.
//
// README: role
var Role = core.UserField[string]{Name: "role"} // SQL adapters: a "role" column of the users table

// newAuth is auth.New with roles: admins get "admin", everyone else "member".
func newAuth(cfg auth.Config, admins []string) (*auth.Auth, error) {
	var a *auth.Auth // the event runs after auth.New has returned
	// A new user: store its role on it.
	cfg.Events.CreateUser = func(ctx context.Context, u core.User) error {
		role := "member"
		if slices.Contains(admins, u.Email) {
			role = "admin"
		}
		up := core.UserUpdate{ID: u.ID}
		if err := Role.Set(&up, role); err != nil {
			return err
		}
		_, err := a.UpdateUser(ctx, up)
		return err
	}
	// GET /auth/session: {"user":{…,"role":"admin"},"expires":…}
	cfg.Callbacks.Session = func(_ context.Context, p auth.SessionParams) (map[string]any, error) {
		if user, ok := p.Session["user"].(map[string]any); ok {
			user["role"], _, _ = Role.Get(p.User) // p.User is set with database sessions
		}
		return p.Session, nil
	}
	a, err := auth.New(cfg)
	return a, err
}

// README: end

// TestRole signs two users in by e-mail link through the README's newAuth
// on bbolt and reads GET /auth/session through the handler: the admin's
// session says role admin, the other's member, and the role is stored on
// the user.
func TestRole(t *testing.T) {
	ctx := context.Background()
	store, err := bboltadapter.Open(ctx, filepath.Join(t.TempDir(), "auth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	links := map[string]string{}
	email := provider.Email("Example <no-reply@example.com>", func(_ context.Context, r provider.VerificationRequest) error {
		links[r.Identifier] = r.URL
		return nil
	})
	a, err := newAuth(auth.Config{Adapter: store, Providers: []provider.Provider{email},
		Secrets: []string{"role-test-secret-0123456789-0123456789"}, BaseURL: "http://localhost:8080/auth"}, []string{"ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]string{"ada@example.com": "admin", "bob@example.com": "member"} {
		if _, err := a.StartEmailSignIn(ctx, "email", addr); err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(links[addr])
		in, err := a.VerifyEmailSignIn(ctx, "email", u.Query().Get("email"), u.Query().Get("token"))
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", a.Settings().BaseURL+"/session", nil)
		req.AddCookie(&http.Cookie{Name: "authjs.session-token", Value: in.Session.SessionToken})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var session struct{ User struct{ Email, Role string } }
		if err := json.Unmarshal(w.Body.Bytes(), &session); err != nil || session.User.Email != addr || session.User.Role != want {
			t.Errorf("GET /auth/session for %s: %d %s (%v); want role %s", addr, w.Code, w.Body, err, want)
		}
		stored, err := store.GetUserByEmail(ctx, addr)
		if role, ok, _ := Role.Get(stored); err != nil || !ok || role != want {
			t.Errorf("stored user %s: role %q (%v, %v); want %s", addr, role, ok, err, want)
		}
	}
}

// TestReadmeRole checks that the README's "A role on the user" block is
// the code TestRole runs.
func TestReadmeRole(t *testing.T) {
	readme, src := readmeAnd(t, "role_test.go")
	_, code, _ := strings.Cut(src, "// README: role\n")
	code, _, _ = strings.Cut(code, "\n// README: end\n")
	if !strings.Contains(readme, "```go\n"+code+"```\n") {
		t.Error("README.md's \"A role on the user\" block differs from examples/quickstart/role_test.go: copy the lines between the README markers into it")
	}
}
