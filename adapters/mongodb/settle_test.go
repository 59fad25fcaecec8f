package mongoadapter_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
)

// slowInserts is a TCP proxy in front of the test server that holds back,
// while delay is set, every chunk the client sends that carries an insert
// command: the insert reaches the server after the caller's context has
// ended and after commands sent later on other connections, as under load
// on the FerretDB stand-in (which ignores maxTimeMS on insert and finishes
// a command whose client has gone).
type slowInserts struct {
	addr  string
	delay atomic.Int64 // time.Duration
}

func newSlowInserts(t *testing.T) *slowInserts {
	t.Helper()
	u, err := url.Parse(provision.MongoDB(t))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &slowInserts{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", u.Host)
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer s.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if d := time.Duration(p.delay.Load()); d > 0 && bytes.Contains(buf[:n], []byte("insert\x00")) {
							time.Sleep(d)
						}
						if _, err := s.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, s)
			}()
		}
	}()
	return p
}

// adapterBehind returns an adapter on a fresh database whose client talks
// to the server through p, with its indexes.
func adapterBehind(t *testing.T, p *slowInserts) (*mongoadapter.Adapter, *mongo.Database) {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + p.addr + "/?directConnection=true").SetTimeout(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	db := c.Database(dbName())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = db.Drop(ctx)
	})
	a, err := mongoadapter.New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a, db
}

// cutInsert runs call with a context that ends while its insert is held
// back by p, and requires it to fail with the context's error.
func cutInsert(t *testing.T, p *slowInserts, call func(ctx context.Context) error) {
	t.Helper()
	p.delay.Store(int64(400 * time.Millisecond))
	defer p.delay.Store(0)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := call(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the call cut short = %v; want its context's error", err)
	}
}

// retryTaken retries f while it fails with core.ErrAlreadyExists, for at
// most 5 s (the inserts cut short go on for 400 ms in the proxy).
func retryTaken(f func() error) error {
	until := time.Now().Add(5 * time.Second)
	for {
		err := f()
		if !errors.Is(err, core.ErrAlreadyExists) || time.Now().After(until) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestInsertCutShortCannotLandLate: a createUser, linkAccount or
// createVerificationToken whose context ends while its insert is on the
// way leaves nothing behind once the call that undoes it (deleteUser,
// useVerificationToken) has run, even though the insert reaches the server
// after that call started. Before the inserts waited for their answer, the
// late insert left the user (its e-mail taken for good), the account (its
// key) or the token behind: the conformance rule cutShort's failure on the
// stand-in under load.
func TestInsertCutShortCannotLandLate(t *testing.T) {
	p := newSlowInserts(t)
	a, db := adapterBehind(t, p)
	ctx := context.Background()

	t.Run("createUser then deleteUser", func(t *testing.T) {
		u := core.User{ID: "cut-user", Email: "cut-user@example.com"}
		cutInsert(t, p, func(ctx context.Context) error { _, err := a.CreateUser(ctx, u); return err })
		if _, err := a.DeleteUser(ctx, u.ID); err != nil {
			t.Fatalf("DeleteUser: %v", err)
		}
		time.Sleep(600 * time.Millisecond) // past the proxy's delay
		if n, err := db.Collection("users").CountDocuments(ctx, bson.D{{Key: "_id", Value: u.ID}}); err != nil || n != 0 {
			t.Errorf("users with the id after deleteUser: %d, %v; want 0", n, err)
		}
		if err := retryTaken(func() error {
			_, err := a.CreateUser(ctx, core.User{ID: "cut-user-2", Email: u.Email})
			return err
		}); err != nil {
			t.Errorf("CreateUser with the e-mail again: %v", err)
		}
	})

	t.Run("linkAccount then deleteUser", func(t *testing.T) {
		u := core.User{ID: "cut-owner", Email: "cut-owner@example.com"}
		if _, err := a.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		acc := core.Account{UserID: u.ID, Type: "oauth", Provider: "github", ProviderAccountID: "cut-1"}
		cutInsert(t, p, func(ctx context.Context) error { _, err := a.LinkAccount(ctx, acc); return err })
		if _, err := a.DeleteUser(ctx, u.ID); err != nil {
			t.Fatalf("DeleteUser: %v", err)
		}
		time.Sleep(600 * time.Millisecond)
		if n, err := db.Collection("accounts").CountDocuments(ctx, bson.D{{Key: "userId", Value: u.ID}}); err != nil || n != 0 {
			t.Errorf("accounts of the deleted user: %d, %v; want 0", n, err)
		}
		nu := core.User{ID: "cut-owner-2", Email: "cut-owner-2@example.com"}
		if _, err := a.CreateUser(ctx, nu); err != nil {
			t.Fatal(err)
		}
		acc.UserID = nu.ID
		if err := retryTaken(func() error { _, err := a.LinkAccount(ctx, acc); return err }); err != nil {
			t.Errorf("LinkAccount of the key to another user: %v", err)
		}
		if got, err := a.GetUserByAccount(ctx, core.AccountKey{Provider: acc.Provider, ProviderAccountID: acc.ProviderAccountID}); err != nil || got == nil || got.ID != nu.ID {
			t.Errorf("GetUserByAccount = %v, %v; want %s", got, err, nu.ID)
		}
	})

	t.Run("createVerificationToken then useVerificationToken", func(t *testing.T) {
		tok := core.VerificationToken{Identifier: "cut-token@example.com", Token: "cut-token", Expires: time.Now().Add(time.Hour)}
		cutInsert(t, p, func(ctx context.Context) error { _, err := a.CreateVerificationToken(ctx, tok); return err })
		if _, err := a.UseVerificationToken(ctx, tok.Key()); err != nil {
			t.Fatalf("UseVerificationToken: %v", err)
		}
		time.Sleep(600 * time.Millisecond)
		if err := retryTaken(func() error { _, err := a.CreateVerificationToken(ctx, tok); return err }); err != nil {
			t.Errorf("CreateVerificationToken again: %v", err)
		}
		if got, err := a.UseVerificationToken(ctx, tok.Key()); err != nil || got == nil {
			t.Errorf("UseVerificationToken of the token issued again = %v, %v; want it", got, err)
		}
	})
}
