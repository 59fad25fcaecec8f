package mongoadapter_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/event"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// recorder keeps the commands a client sends, as "name collection" (e.g.
// "find users"; the collection is left out for commands without one).
type recorder struct {
	mu   sync.Mutex
	cmds []string
}

func (r *recorder) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		s := e.CommandName
		if v, err := e.Command.LookupErr(e.CommandName); err == nil {
			if coll, ok := v.StringValueOK(); ok {
				s += " " + coll
			}
		}
		r.mu.Lock()
		r.cmds = append(r.cmds, s)
		r.mu.Unlock()
	}}
}

// during returns the commands sent while f ran.
func (r *recorder) during(f func()) []string {
	r.mu.Lock()
	r.cmds = nil
	r.mu.Unlock()
	f()
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.cmds)
}

// TestCommandsPerOperation counts the commands each operation sends to the
// server, for the paths the server allows, and checks them against the
// table in README.md.
func TestCommandsPerOperation(t *testing.T) {
	rec := &recorder{}
	s := newServer(t, rec.monitor())
	for _, mode := range []struct {
		name string
		opts []mongoadapter.Option
	}{
		{"auto", nil},
		{"fallbacks", []mongoadapter.Option{mongoadapter.WithoutLookup(), mongoadapter.WithoutTransactions()}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			a, _ := newAdapter(t, s, mode.opts...)
			caps := a.Capabilities()
			t.Logf("capabilities: %+v", caps)
			testCommands(t, a, caps, rec)
		})
	}
}

func testCommands(t *testing.T, a *mongoadapter.Adapter, caps mongoadapter.Capabilities, rec *recorder) {
	ctx := context.Background()
	u := core.User{ID: "u1", Email: "u1@example.com", Username: "u1.name"}
	other := core.User{ID: "u2", Email: "u2@example.com"}
	acc := core.Account{UserID: u.ID, Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "gh-1"}
	sess := core.Session{SessionToken: "st-1", UserID: u.ID, Expires: time.Now().Add(time.Hour)}
	later := core.NormalizeTime(time.Now().Add(2 * time.Hour))
	tok := core.VerificationToken{Identifier: "u1@example.com", Token: "vt-1", Expires: time.Now().Add(time.Hour)}
	hash := "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA"
	pw := core.Account{UserID: u.ID, Provider: core.PasswordProvider, Type: core.AccountTypeCredentials, ProviderAccountID: u.ID, PasswordHash: &hash}
	au := core.Authenticator{CredentialID: "cred-1", CredentialPublicKey: "pk", UserID: u.ID, ProviderAccountID: "gh-1", CredentialDeviceType: "singleDevice"}
	fa := core.Factor{ID: "factor-1", UserID: u.ID, Type: core.FactorTOTP, Secret: []byte("sealed"), CreatedAt: time.Now()}
	faNext := fa
	faNext.Step, faNext.LastUsedAt = 1, time.Now()
	delFactor := []string{"findAndModify authport_factors"}
	if !caps.AtomicFindAndModify {
		delFactor = []string{"find authport_factors", "delete authport_factors"}
	}

	// join is the cost of getSessionAndUser and getUserByAccount.
	join := func(first string) []string {
		if caps.Lookup {
			return []string{"aggregate " + first}
		}
		return []string{"find " + first, "find users"}
	}
	use := []string{"findAndModify verification_tokens"}
	if !caps.AtomicFindAndModify {
		use = []string{"find verification_tokens", "delete verification_tokens"}
	}
	// locked is the cost of an update: where updates are not atomic, the
	// update is wrapped in the insert and delete of its lock document.
	locked := func(update string) []string {
		if caps.AtomicFindAndModify {
			return []string{update}
		}
		return []string{"insert authport_locks", update, "delete authport_locks"}
	}
	sweep := []string{"delete sessions", "delete accounts", "delete authenticators", "delete authport_factors"}
	del := append([]string{"findAndModify users"}, sweep...)
	if caps.Transactions {
		del = append(append(del, "commitTransaction"), sweep...)
	}

	steps := []struct {
		op   string
		want []string
		run  func() (any, error)
	}{
		{"createUser", []string{"insert users"}, func() (any, error) { return a.CreateUser(ctx, u) }},
		{"createUser (second)", []string{"insert users"}, func() (any, error) { return a.CreateUser(ctx, other) }},
		{"getUser", []string{"find users"}, func() (any, error) { return a.GetUser(ctx, u.ID) }},
		{"getUserByEmail", []string{"find users"}, func() (any, error) { return a.GetUserByEmail(ctx, u.Email) }},
		{"getUserByUsername", []string{"find users"}, func() (any, error) { return a.GetUserByUsername(ctx, u.Username) }},
		{"updateUser", locked("findAndModify users"), func() (any, error) {
			return a.UpdateUser(ctx, core.UserUpdate{ID: u.ID, Name: core.Set(new("Ada"))})
		}},
		{"linkAccount", []string{"find users", "insert accounts", "find users"}, func() (any, error) { return a.LinkAccount(ctx, acc) }},
		{"linkAccount (password)", []string{"find users", "insert accounts", "find users"}, func() (any, error) { return a.LinkAccount(ctx, pw) }},
		{"swapPasswordHash", locked("findAndModify accounts"), func() (any, error) {
			return a.SwapPasswordHash(ctx, pw.Key(), hash, hash+"2")
		}},
		{"swapPasswordHash (changed)", append(locked("findAndModify accounts"), "find accounts"), func() (any, error) {
			acc, err := a.SwapPasswordHash(ctx, pw.Key(), hash, hash+"3")
			if errors.Is(err, core.ErrPasswordHashChanged) {
				return acc, nil
			}
			return nil, fmt.Errorf("want ErrPasswordHashChanged, got %v", err)
		}},
		{"getAccount", []string{"find accounts"}, func() (any, error) { return a.GetAccount(ctx, acc.ProviderAccountID, acc.Provider) }},
		{"getUserByAccount", join("accounts"), func() (any, error) { return a.GetUserByAccount(ctx, acc.Key()) }},
		{"createSession", []string{"find users", "insert sessions", "find users"}, func() (any, error) { return a.CreateSession(ctx, sess) }},
		{"getSessionAndUser", join("sessions"), func() (any, error) { return a.GetSessionAndUser(ctx, sess.SessionToken) }},
		{"updateSession (expires)", locked("findAndModify sessions"), func() (any, error) {
			return a.UpdateSession(ctx, core.SessionUpdate{SessionToken: sess.SessionToken, Expires: core.Set(later)})
		}},
		{"updateSession (userId)", append(append([]string{"find users"}, locked("findAndModify sessions")...), "find users"), func() (any, error) {
			return a.UpdateSession(ctx, core.SessionUpdate{SessionToken: sess.SessionToken, UserID: core.Set(u.ID)})
		}},
		{"createVerificationToken", []string{"insert verification_tokens"}, func() (any, error) { return a.CreateVerificationToken(ctx, tok) }},
		{"useVerificationToken", use, func() (any, error) { return a.UseVerificationToken(ctx, tok.Key()) }},
		{"createAuthenticator", []string{"find users", "insert authenticators", "find users"}, func() (any, error) { return a.CreateAuthenticator(ctx, au) }},
		{"getAuthenticator", []string{"find authenticators"}, func() (any, error) { return a.GetAuthenticator(ctx, au.CredentialID) }},
		{"listAuthenticatorsByUserId", []string{"find authenticators"}, func() (any, error) {
			l, err := a.ListAuthenticatorsByUserID(ctx, u.ID)
			if len(l) != 1 {
				return nil, err
			}
			return l, err
		}},
		{"updateAuthenticatorCounter", locked("findAndModify authenticators"), func() (any, error) {
			return a.UpdateAuthenticatorCounter(ctx, au.CredentialID, 8)
		}},
		{"extendSession", locked("findAndModify sessions"), func() (any, error) {
			s, wrote, err := a.ExtendSession(ctx, sess.SessionToken, later, later.Add(time.Hour), time.Now())
			if !wrote {
				return nil, err
			}
			return s, err
		}},
		{"listSessionsByUserId", []string{"find sessions"}, func() (any, error) {
			l, err := a.ListSessionsByUserID(ctx, u.ID)
			if len(l) != 1 {
				return nil, err
			}
			return l, err
		}},
		{"deleteSessionsByUserId", []string{"delete sessions", "delete sessions"}, func() (any, error) {
			return a.DeleteSessionsByUserID(ctx, u.ID, sess.SessionToken)
		}},
		{"createFactor", []string{"find users", "insert authport_factors", "find users"}, func() (any, error) { return a.CreateFactor(ctx, fa) }},
		{"listFactorsByUserId", []string{"find authport_factors"}, func() (any, error) {
			l, err := a.ListFactorsByUserID(ctx, u.ID)
			if len(l) != 1 {
				return nil, err
			}
			return l, err
		}},
		{"swapFactor", locked("findAndModify authport_factors"), func() (any, error) { return a.SwapFactor(ctx, fa, faNext) }},
		{"swapFactor (changed)", append(locked("findAndModify authport_factors"), "find authport_factors"), func() (any, error) {
			f, err := a.SwapFactor(ctx, fa, faNext)
			if errors.Is(err, core.ErrFactorChanged) {
				return f, nil
			}
			return nil, fmt.Errorf("want ErrFactorChanged, got %v", err)
		}},
		{"deleteFactor", delFactor, func() (any, error) { return a.DeleteFactor(ctx, u.ID, fa.ID) }},
		{"createFactor (again)", []string{"find users", "insert authport_factors", "find users"}, func() (any, error) { return a.CreateFactor(ctx, fa) }},
		{"deleteSession", []string{"findAndModify sessions"}, func() (any, error) { return a.DeleteSession(ctx, sess.SessionToken) }},
		{"unlinkAccount", []string{"findAndModify accounts"}, func() (any, error) { return a.UnlinkAccount(ctx, acc.Key()) }},
		{"deleteUser", del, func() (any, error) { return a.DeleteUser(ctx, u.ID) }},
		{"purgeExpired", []string{"delete sessions", "delete verification_tokens"}, func() (any, error) {
			r, err := a.PurgeExpired(ctx)
			return &r, err
		}},
	}
	var table []string
	for _, st := range steps {
		var got any
		var err error
		cmds := rec.during(func() { got, err = st.run() })
		if err != nil {
			t.Fatalf("%s: %v", st.op, err)
		}
		if isNil(got) {
			t.Fatalf("%s found nothing; the counts below would be of the not-found path", st.op)
		}
		if !slices.Equal(cmds, st.want) {
			t.Errorf("%s sent %d commands %q, want %d %q", st.op, len(cmds), cmds, len(st.want), st.want)
		}
		table = append(table, fmt.Sprintf("| %s | %d | %s |", st.op, len(cmds), strings.Join(cmds, ", ")))
	}
	t.Logf("commands per operation:\n%s", strings.Join(table, "\n"))
}

// isNil reports whether an operation's result is a nil pointer.
func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	return v == nil || rv.Kind() == reflect.Pointer && rv.IsNil()
}
