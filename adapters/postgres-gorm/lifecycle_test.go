package gormadapter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// slowPrepare makes the prepare of one statement text hang, as on a slow
// server, ignoring the caller's context, until released.
type slowPrepare struct {
	query   atomic.Pointer[string]
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newSlowPrepare() *slowPrepare {
	return &slowPrepare{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (s *slowPrepare) hook(_ context.Context, query string) {
	if q := s.query.Load(); q != nil && *q == query {
		s.entered <- struct{}{}
		<-s.release
	}
}

func (s *slowPrepare) block(query string) { s.query.Store(&query) }
func (s *slowPrepare) unblock()           { s.once.Do(func() { close(s.release) }) }

// TestPrepareWaitHonoursContext checks that a caller waiting for another
// caller's prepare of the same statement gives up when its own context
// ends, instead of waiting as long as the other's prepare takes.
func TestPrepareWaitHonoursContext(t *testing.T) {
	ctx := context.Background()
	slow := newSlowPrepare()
	db := openSQLiteCounted(t, &counter{beforePrepare: slow.hook})
	a := migrated(t, db)
	slow.block(a.qs().getUser.sql)
	defer slow.unblock()

	first := make(chan error, 1)
	go func() {
		_, err := a.GetUser(ctx, "u") // prepares getUser, slowly
		first <- err
	}()
	<-slow.entered
	// So that the test fails rather than hangs where the second caller
	// waits for the first prepare regardless of its deadline.
	fallback := time.AfterFunc(5*time.Second, slow.unblock)
	defer fallback.Stop()

	tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	start := time.Now()
	u, err := a.GetUser(tctx, "u")
	elapsed := time.Since(start)
	cancel()
	if u != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("getUser with a 100ms deadline during another caller's prepare = %v, %v; want context.DeadlineExceeded", u, err)
	}
	if elapsed > 2*time.Second {
		t.Errorf("getUser with a 100ms deadline returned after %v: it waited for the other caller's prepare", elapsed)
	}
	// Other statements are not held up either.
	if _, err := a.GetUserByEmail(ctx, "u@example.com"); err != nil {
		t.Errorf("getUserByEmail during getUser's prepare: %v", err)
	}

	slow.unblock()
	if err := <-first; err != nil {
		t.Errorf("the getUser that prepared: %v", err)
	}
	if a.qs().getUser.prepared.Load() == nil {
		t.Error("getUser's statement was not kept after its prepare")
	}
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
		t.Fatal(err)
	}
	if got, err := a.GetUser(ctx, "u"); err != nil || got == nil {
		t.Errorf("getUser after the prepare = %v, %v", got, err)
	}
}

// TestConcurrentFirstUse has many callers use one statement for the first
// time at once: exactly one prepare is kept and all of them succeed.
func TestConcurrentFirstUse(t *testing.T) {
	ctx := context.Background()
	c := &counter{}
	db := openSQLiteCounted(t, c)
	a := migrated(t, db)
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			if u, err := a.GetUser(ctx, "u"); err != nil || u == nil {
				errs <- fmt.Errorf("getUser = %v, %v", u, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// closedCalls calls every method of a once and returns their errors by
// spec name.
func closedCalls(ctx context.Context, a *Adapter) map[string]error {
	exp := time.Now().Add(time.Hour)
	errs := map[string]error{}
	call := func(m string, err error) { errs[m] = err }
	_, err := a.CreateUser(ctx, core.User{ID: "x", Email: "x@example.com"})
	call("createUser", err)
	_, err = a.GetUser(ctx, "x")
	call("getUser", err)
	_, err = a.GetUserByEmail(ctx, "x@example.com")
	call("getUserByEmail", err)
	_, err = a.GetUserByAccount(ctx, core.AccountKey{Provider: "p", ProviderAccountID: "x"})
	call("getUserByAccount", err)
	_, err = a.UpdateUser(ctx, core.UserUpdate{ID: "x", Name: core.Set(ptr("X"))})
	call("updateUser", err)
	_, err = a.DeleteUser(ctx, "x")
	call("deleteUser", err)
	_, err = a.LinkAccount(ctx, core.Account{UserID: "x", Provider: "p", Type: core.AccountTypeOAuth, ProviderAccountID: "x"})
	call("linkAccount", err)
	_, err = a.GetAccount(ctx, "x", "p")
	call("getAccount", err)
	_, err = a.UnlinkAccount(ctx, core.AccountKey{Provider: "p", ProviderAccountID: "x"})
	call("unlinkAccount", err)
	_, err = a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "x", Expires: exp})
	call("createSession", err)
	_, err = a.GetSessionAndUser(ctx, "s")
	call("getSessionAndUser", err)
	_, err = a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", Expires: core.Set(exp)})
	call("updateSession", err)
	_, _, err = a.ExtendSession(ctx, "s", exp, exp.Add(time.Hour), time.Now())
	call("extendSession", err)
	_, err = a.DeleteSession(ctx, "s")
	call("deleteSession", err)
	_, err = a.ListSessionsByUserID(ctx, "x")
	call("listSessionsByUserId", err)
	_, err = a.DeleteSessionsByUserID(ctx, "x", "")
	call("deleteSessionsByUserId", err)
	_, err = a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "x", Token: "t", Expires: exp})
	call("createVerificationToken", err)
	_, err = a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "x", Token: "t"})
	call("useVerificationToken", err)
	_, err = a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "c", CredentialPublicKey: "k", UserID: "x",
		ProviderAccountID: "x", CredentialDeviceType: "singleDevice"})
	call("createAuthenticator", err)
	_, err = a.GetAuthenticator(ctx, "c")
	call("getAuthenticator", err)
	_, err = a.ListAuthenticatorsByUserID(ctx, "x")
	call("listAuthenticatorsByUserId", err)
	_, err = a.UpdateAuthenticatorCounter(ctx, "c", 1)
	call("updateAuthenticatorCounter", err)
	_, err = a.PurgeExpired(ctx)
	call("purgeExpired", err)
	call("migrate", a.Migrate(ctx))
	return errs
}

// TestClose checks that after Close every method fails with ErrClosed
// (and net.ErrClosed) without preparing anything, that Close waits for a
// call in progress and releases the statement that call prepares, and
// that calls racing with Close either complete or find the adapter closed.
func TestClose(t *testing.T) {
	ctx := context.Background()

	t.Run("after_close", func(t *testing.T) {
		c := &counter{}
		db := openSQLiteCounted(t, c)
		a := migrated(t, db)
		if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); err != nil {
			t.Fatal(err)
		}
		if c.prepares.Load() == 0 {
			t.Fatal("nothing was prepared before Close")
		}
		if err := a.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := a.Close(); err != nil {
			t.Errorf("a second Close: %v", err)
		}
		prepared := c.prepares.Load()
		errs := closedCalls(ctx, a)
		if len(errs) != 24 {
			t.Errorf("%d methods called, want 24", len(errs))
		}
		for m, err := range errs {
			if !errors.Is(err, ErrClosed) || !errors.Is(err, net.ErrClosed) {
				t.Errorf("%s after Close: %v, want ErrClosed", m, err)
			}
		}
		if n := c.prepares.Load() - prepared; n != 0 {
			t.Errorf("%d statements prepared after Close", n)
		}
		if n := c.open.Load(); n != 0 {
			t.Errorf("%d prepared statements left open after Close", n)
		}
	})

	t.Run("close_during_a_prepare", func(t *testing.T) {
		slow := newSlowPrepare()
		c := &counter{beforePrepare: slow.hook}
		db := openSQLiteCounted(t, c)
		a := migrated(t, db)
		slow.block(a.qs().getUser.sql)
		defer slow.unblock()
		first := make(chan error, 1)
		go func() {
			_, err := a.GetUser(ctx, "u")
			first <- err
		}()
		<-slow.entered
		closed := make(chan error, 1)
		go func() { closed <- a.Close() }()
		returned := false
		select {
		case err := <-closed:
			t.Errorf("Close returned (%v) while a call was preparing a statement", err)
			returned = true
		case <-time.After(200 * time.Millisecond):
		}
		slow.unblock()
		if err := <-first; err != nil {
			t.Errorf("the call in progress during Close: %v", err)
		}
		if !returned {
			select {
			case err := <-closed:
				if err != nil {
					t.Errorf("Close: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Close did not return after the call in progress did")
			}
		}
		if _, err := a.GetUser(ctx, "u"); !errors.Is(err, ErrClosed) {
			t.Errorf("getUser after Close: %v, want ErrClosed", err)
		}
		if n := c.open.Load(); n != 0 {
			t.Errorf("%d prepared statements left open after Close: the one prepared during Close leaked", n)
		}
	})

	t.Run("close_under_load", func(t *testing.T) {
		c := &counter{}
		db := openSQLiteCounted(t, c)
		a := migrated(t, db)
		var wg sync.WaitGroup
		var calls, closedErrs atomic.Int64
		errs := make(chan error, 64)
		deadline := time.Now().Add(10 * time.Second)
		for g := range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					if time.Now().After(deadline) {
						errs <- errors.New("no ErrClosed 10s after Close")
						return
					}
					id := fmt.Sprintf("g%d-%d", g, i)
					_, err := a.CreateUser(ctx, core.User{ID: id, Email: id + "@example.com"})
					if err == nil {
						_, err = a.CreateSession(ctx, core.Session{SessionToken: id, UserID: id, Expires: time.Now().Add(time.Hour)})
					}
					if err == nil {
						_, err = a.GetSessionAndUser(ctx, id)
					}
					if err == nil {
						_, err = a.DeleteUser(ctx, id)
					}
					calls.Add(1)
					if errors.Is(err, ErrClosed) {
						closedErrs.Add(1)
						return
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		time.Sleep(200 * time.Millisecond)
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("a call racing with Close: %v (want success or ErrClosed)", err)
		}
		if closedErrs.Load() != 4 {
			t.Errorf("%d of 4 goroutines saw ErrClosed", closedErrs.Load())
		}
		if n := c.open.Load(); n != 0 {
			t.Errorf("%d prepared statements left open after Close", n)
		}
		t.Logf("%d rounds before Close", calls.Load())
	})
}

// TestSingleConnectionPool runs the transactional paths on a pool of one
// connection (SQLite is often opened so): a transaction must not wait for
// a second connection to prepare a statement, which would never come.
func TestSingleConnectionPool(t *testing.T) {
	for _, v := range []struct {
		name string
		opts []Option
	}{{"without_returning", []Option{withoutReturning()}}, {"without_foreign_keys", []Option{WithoutForeignKeys(), withoutReturning()}}} {
		t.Run(v.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			db := openSQLite(t, false)
			db.sqlDB.SetMaxOpenConns(1)
			a := mustNew(t, db, v.opts...)
			if err := a.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			exp := time.Now().Add(time.Hour)
			steps := []struct {
				what string
				run  func() error
			}{
				{"createUser", func() error { _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "u@example.com"}); return err }},
				{"updateUser", func() error {
					_, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u", Name: core.Set(ptr("N"))})
					return err
				}},
				{"createSession", func() error {
					_, err := a.CreateSession(ctx, core.Session{SessionToken: "s", UserID: "u", Expires: exp})
					return err
				}},
				{"updateSession", func() error {
					_, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: "s", UserID: core.Set("u")})
					return err
				}},
				{"extendSession", func() error {
					_, wrote, err := a.ExtendSession(ctx, "s", core.NormalizeTime(exp), exp.Add(time.Hour), time.Now())
					if err == nil && !wrote {
						err = errors.New("nothing written")
					}
					return err
				}},
				{"createAuthenticator", func() error {
					_, err := a.CreateAuthenticator(ctx, core.Authenticator{CredentialID: "c", UserID: "u", ProviderAccountID: "p",
						CredentialPublicKey: "k", CredentialDeviceType: "singleDevice"})
					return err
				}},
				{"updateAuthenticatorCounter", func() error { _, err := a.UpdateAuthenticatorCounter(ctx, "c", 2); return err }},
				{"deleteSession", func() error { _, err := a.DeleteSession(ctx, "s"); return err }},
				{"deleteUser", func() error { _, err := a.DeleteUser(ctx, "u"); return err }},
			}
			for _, s := range steps {
				if err := s.run(); err != nil {
					t.Fatalf("%s on a one-connection pool: %v", s.what, err)
				}
			}
		})
	}
}
