package redisadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/redis/internal/redistest"
	"github.com/authport/authport/core"
)

// countHook counts what a client sends: every Process call is one round
// trip and one command; every pipeline is one round trip of len(cmds)
// commands.
type countHook struct {
	mu    sync.Mutex
	trips int
	cmds  int
	names []string
}

// count adds one round trip of cmds commands, named name.
func (h *countHook) count(cmds int, name string) {
	h.mu.Lock()
	h.trips++
	h.cmds += cmds
	h.names = append(h.names, name)
	h.mu.Unlock()
}

// hook returns the go-redis hook that counts.
func (h *countHook) hook() redistest.Hook {
	return redistest.Hook{
		Process: func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
			h.count(1, cmd.Name())
			return next(ctx, cmd)
		},
		Pipeline: func(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error {
			h.count(len(cmds), fmt.Sprintf("pipeline(%d)", len(cmds)))
			return next(ctx, cmds)
		},
	}
}

func (h *countHook) reset() {
	h.mu.Lock()
	h.trips, h.cmds, h.names = 0, 0, nil
	h.mu.Unlock()
}

func (h *countHook) get() (int, int, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.trips, h.cmds, strings.Join(h.names, " ")
}

// roundTripCase is one operation and the round trips and commands it takes
// on a single node and on a cluster. run sets up what the operation needs,
// then calls measure with the operation alone.
type roundTripCase struct {
	name                    string
	single, cluster         int // round trips
	singleCmds, clusterCmds int // commands
	run                     func(t *testing.T, ctx context.Context, a *Adapter, measure func(func() error))
}

func roundTripCases() []roundTripCase {
	// base creates a user with an account, a session and an authenticator.
	base := func(t *testing.T, ctx context.Context, a *Adapter) core.User {
		t.Helper()
		u := core.User{ID: "u-base", Email: "base@example.com", Name: ptr("N")}
		must[any](t)(a.CreateUser(ctx, u))
		must[any](t)(a.LinkAccount(ctx, core.Account{UserID: u.ID, Provider: "p", Type: core.AccountTypeOAuth, ProviderAccountID: "pa"}))
		must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: u.ID, Expires: soon(time.Hour)}))
		must[any](t)(a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "c", CredentialPublicKey: "k", UserID: u.ID, ProviderAccountID: "pa"}))
		must[any](t)(a.CreateUser(ctx, core.User{ID: "u-other", Email: "other@example.com"}))
		return u
	}
	pa := core.AccountKey{Provider: "p", ProviderAccountID: "pa"}
	type ctxA = context.Context
	return []roundTripCase{
		{"createUser", 1, 3, 1, 3, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			measure(func() error { _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); return err })
		}},
		{"createUser (e-mail and username)", 1, 5, 1, 5, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			measure(func() error {
				_, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com", Username: "ada"})
				return err
			})
		}},
		{"createUser (neither)", 1, 1, 1, 1, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			measure(func() error { _, err := a.CreateUser(ctx, core.User{ID: "u"}); return err })
		}},
		{"getUserByUsername", 1, 2, 1, 2, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			must[any](t)(a.CreateUser(ctx, core.User{ID: "u", Username: "ada"}))
			measure(func() error { return found(a.GetUserByUsername(ctx, "ada")) })
		}},
		{"updateUser (e-mail and username)", 1, 9, 1, 9, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			must[any](t)(a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com", Username: "ada"}))
			measure(func() error {
				return found(a.UpdateUser(ctx, core.UserUpdate{ID: "u", Email: core.Set("new@example.com"), Username: core.Set("bob")}))
			})
		}},
		{"swapPasswordHash", 3, 3, 3, 3, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			must[any](t)(a.LinkAccount(ctx, core.Account{UserID: u.ID, Provider: core.PasswordProvider, Type: core.AccountTypeCredentials,
				ProviderAccountID: u.ID, PasswordHash: ptr("h0")}))
			measure(func() error {
				return found(a.SwapPasswordHash(ctx, core.AccountKey{Provider: core.PasswordProvider, ProviderAccountID: u.ID}, "h0", "h1"))
			})
		}},
		{"getUser", 1, 1, 1, 1, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error { return found(a.GetUser(ctx, u.ID)) })
		}},
		{"getUserByEmail", 1, 2, 1, 2, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error { return found(a.GetUserByEmail(ctx, u.Email)) })
		}},
		{"getUserByAccount", 1, 2, 1, 2, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			base(t, ctx, a)
			measure(func() error { return found(a.GetUserByAccount(ctx, pa)) })
		}},
		{"updateUser (name)", 1, 1, 1, 1, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error { return found(a.UpdateUser(ctx, core.UserUpdate{ID: u.ID, Name: core.Set(ptr("M"))})) })
		}},
		{"updateUser (e-mail)", 1, 6, 1, 6, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error {
				return found(a.UpdateUser(ctx, core.UserUpdate{ID: u.ID, Email: core.Set("new@example.com")}))
			})
		}},
		{"deleteUser (1 account, 1 session, 1 authenticator)", 1, 3, 1, 6, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error { return found(a.DeleteUser(ctx, u.ID)) })
		}},
		{"linkAccount", 1, 3, 1, 3, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error {
				return found(a.LinkAccount(ctx, core.Account{UserID: u.ID, Provider: "q", Type: core.AccountTypeOIDC, ProviderAccountID: "x"}))
			})
		}},
		{"unlinkAccount", 1, 3, 1, 3, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			base(t, ctx, a)
			measure(func() error { return found(a.UnlinkAccount(ctx, pa)) })
		}},
		{"getAccount", 1, 2, 1, 2, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			base(t, ctx, a)
			measure(func() error { return found(a.GetAccount(ctx, "pa", "p")) })
		}},
		{"createSession", 1, 2, 1, 2, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error {
				return found(a.CreateSession(ctx, core.Session{SessionToken: "s2", UserID: u.ID, Expires: soon(time.Hour)}))
			})
		}},
		{"getSessionAndUser", 1, 2, 1, 2, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			base(t, ctx, a)
			measure(func() error { return found(a.GetSessionAndUser(ctx, "s")) })
		}},
		{"updateSession (expires)", 1, 3, 1, 3, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			base(t, ctx, a)
			measure(func() error {
				return found(a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", Expires: core.Set(soon(2 * time.Hour))}))
			})
		}},
		{"extendSession", 1, 3, 1, 3, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			base(t, ctx, a)
			from := soon(time.Hour) // not before the stored expiry: it writes
			measure(func() error {
				_, wrote, err := a.ExtendSession(ctx, "s", from, soon(2*time.Hour), time.Now())
				if err == nil && !wrote {
					err = errors.New("extendSession wrote nothing")
				}
				return err
			})
		}},
		{"updateSession (userId)", 1, 9, 1, 9, // cluster: + SET and compare-and-delete of the move marker
			func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
				base(t, ctx, a)
				measure(func() error {
					return found(a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", UserID: core.Set("u-other")}))
				})
			}},
		{"deleteSession", 1, 3, 1, 3, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			base(t, ctx, a)
			measure(func() error { return found(a.DeleteSession(ctx, "s")) })
		}},
		{"listSessionsByUserId", 1, 1, 1, 1, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error {
				l, err := a.ListSessionsByUserID(ctx, u.ID)
				if err == nil && len(l) != 1 {
					err = fmt.Errorf("listed %d sessions, want 1", len(l))
				}
				return err
			})
		}},
		{"deleteSessionsByUserId (2 sessions)", 1, 2, 1, 4, // cluster: the script, then one pipeline releasing the 2 session keys and deleting the receipt
			func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
				u := base(t, ctx, a)
				must[any](t)(a.CreateSession(ctx, core.Session{SessionToken: "s2", UserID: u.ID, Expires: soon(time.Hour)}))
				measure(func() error {
					n, err := a.DeleteSessionsByUserID(ctx, u.ID, "")
					if err == nil && n != 2 {
						err = fmt.Errorf("deleted %d sessions, want 2", n)
					}
					return err
				})
			}},
		{"createVerificationToken", 1, 1, 1, 1, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			measure(func() error {
				return found(a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t", Expires: soon(time.Hour)}))
			})
		}},
		{"useVerificationToken", 1, 1, 1, 1, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			must[any](t)(a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "i", Token: "t", Expires: soon(time.Hour)}))
			measure(func() error {
				return found(a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "i", Token: "t"}))
			})
		}},
		{"createAuthenticator", 1, 3, 1, 3, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error {
				return found(a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "c2", CredentialPublicKey: "k", UserID: u.ID, ProviderAccountID: "pa"}))
			})
		}},
		{"getAuthenticator", 1, 2, 1, 2, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			base(t, ctx, a)
			measure(func() error { return found(a.GetAuthenticator(ctx, "c")) })
		}},
		{"listAuthenticatorsByUserId", 1, 1, 1, 1, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error {
				l, err := a.ListAuthenticatorsByUserID(ctx, u.ID)
				if err == nil && len(l) != 1 {
					err = fmt.Errorf("listed %d authenticators, want 1", len(l))
				}
				return err
			})
		}},
		{"updateAuthenticatorCounter", 1, 2, 1, 2, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			base(t, ctx, a)
			measure(func() error { return found(a.UpdateAuthenticatorCounter(ctx, "c", 9)) })
		}},
		{"createFactor", 1, 3, 1, 3, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			measure(func() error { return found(a.CreateFactor(ctx, testFactor("f", u.ID))) })
		}},
		{"listFactorsByUserId", 1, 1, 1, 1, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			must[*core.Factor](t)(a.CreateFactor(ctx, testFactor("f", u.ID)))
			measure(func() error {
				l, err := a.ListFactorsByUserID(ctx, u.ID)
				if err == nil && len(l) != 1 {
					err = fmt.Errorf("listed %d factors, want 1", len(l))
				}
				return err
			})
		}},
		{"swapFactor", 1, 1, 1, 1, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			f := testFactor("f", u.ID)
			must[*core.Factor](t)(a.CreateFactor(ctx, f))
			next := f
			next.Step++
			measure(func() error { return found(a.SwapFactor(ctx, f, next)) })
		}},
		{"deleteFactor", 1, 2, 1, 2, func(t *testing.T, ctx ctxA, a *Adapter, measure func(func() error)) {
			u := base(t, ctx, a)
			must[*core.Factor](t)(a.CreateFactor(ctx, testFactor("f", u.ID)))
			measure(func() error { return found(a.DeleteFactor(ctx, u.ID, "f")) })
		}},
	}
}

func ptr[T any](v T) *T { return &v }

// must fails t when a setup call fails.
func must[T any](t testing.TB) func(T, error) {
	return func(_ T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// found turns a lookup's result into an error when it found nothing.
func found[T any](v *T, err error) error {
	if err == nil && v == nil {
		return fmt.Errorf("got nil, want a record")
	}
	return err
}

// TestRoundTrips counts, with a go-redis hook, the round trips and
// commands of every operation on a single node and on a cluster, and
// checks them against the table in README.md.
func TestRoundTrips(t *testing.T) {
	for _, b := range []struct {
		name    string
		cluster bool
		connect func(testing.TB) redis.UniversalClient
	}{{"redis", false, singleNode}, {"redis-cluster", true, cluster}} {
		t.Run(b.name, func(t *testing.T) {
			c := b.connect(t)
			t.Cleanup(func() { _ = c.Close() })
			hook := &countHook{}
			c.AddHook(hook.hook())
			for _, tc := range roundTripCases() {
				t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
					ctx := context.Background()
					a, _ := fixture(t, c)
					if err := a.Preload(ctx); err != nil {
						t.Fatal(err)
					}
					wantTrips, wantCmds := tc.single, tc.singleCmds
					if b.cluster {
						wantTrips, wantCmds = tc.cluster, tc.clusterCmds
					}
					measured := false
					tc.run(t, ctx, a, func(op func() error) {
						measured = true
						hook.reset()
						err := op()
						trips, cmds, names := hook.get()
						if err != nil {
							t.Fatalf("%s: %v", tc.name, err)
						}
						if trips != wantTrips || cmds != wantCmds {
							t.Errorf("%s: %d round trips, %d commands (%s); want %d, %d", tc.name, trips, cmds, names, wantTrips, wantCmds)
						}
						t.Logf("%s: %d round trips, %d commands: %s", tc.name, trips, cmds, names)
					})
					if !measured {
						t.Fatal("case measured nothing")
					}
				})
			}
		})
	}
}
