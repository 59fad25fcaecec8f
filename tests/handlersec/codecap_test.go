package handlersec

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/authport/authport/adapters/memory"
	redisrate "github.com/authport/authport/adapters/redis/ratelimit"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/ratelimit"
)

// admitted counts the attempts a rate-limit store admits.
type admitted struct {
	ratelimit.Store
	n atomic.Int64
}

func (a *admitted) Allow(ctx context.Context, key string, l ratelimit.Limit) (ratelimit.Result, error) {
	res, err := a.Store.Allow(ctx, key, l)
	if err == nil && res.Allowed {
		a.n.Add(1)
	}
	return res, err
}

// TestCodeAttemptCapAcrossInstances runs four Auth instances on one store
// sharing one Redis Cluster rate-limit store (auth.Config.RateLimiter) and
// sends 40 concurrent guesses of an e-mail sign-in code, ten through each:
// the four together admit exactly the cap (provider.DefaultCodeAttempts),
// no extra guess, and the right code is dead afterwards.
func TestCodeAttemptCapAcrossInstances(t *testing.T) {
	c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: provision.RedisCluster(t)})
	t.Cleanup(func() { _ = c.Close() })
	limiter := &admitted{Store: redisrate.New(c, redisrate.WithPrefix(randomName(t)+":"))}
	users := memory.New()
	var mu sync.Mutex
	var code string
	instances := make([]*auth.Auth, 4)
	for i := range instances {
		email := provider.Email("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
			mu.Lock()
			defer mu.Unlock()
			code = r.Code
			return nil
		})
		email.Codes = true
		a, err := auth.New(auth.Config{Adapter: users, Providers: []provider.Provider{email}, Secrets: []string{secret},
			BaseURL: "https://app.example.com/auth", RateLimiter: limiter})
		if err != nil {
			t.Fatal(err)
		}
		instances[i] = a
	}
	ctx := context.Background()
	if _, err := instances[0].StartEmailSignInWithCode(ctx, "email", "cap@example.com", "browser"); err != nil {
		t.Fatal(err)
	}
	wrong := "000000"
	if code == wrong {
		wrong = "000001"
	}
	var wg sync.WaitGroup
	var signedIn atomic.Int64
	for i := range 40 {
		a := instances[i%len(instances)]
		wg.Go(func() {
			if _, err := a.VerifyEmailSignInCode(ctx, "email", "cap@example.com", wrong, "browser"); err == nil {
				signedIn.Add(1)
			} else if auth.CodeOf(err) != auth.CodeVerification {
				t.Errorf("a wrong code: %v; want Verification", err)
			}
		})
	}
	wg.Wait()
	if n := limiter.n.Load(); n != provider.DefaultCodeAttempts || signedIn.Load() != 0 {
		t.Fatalf("the four instances admitted %d guesses (%d signed in); want exactly %d and none", n, signedIn.Load(), provider.DefaultCodeAttempts)
	}
	if _, err := instances[3].VerifyEmailSignInCode(ctx, "email", "cap@example.com", code, "browser"); auth.CodeOf(err) != auth.CodeVerification {
		t.Errorf("the right code after the cap: %v; want it refused (dead)", err)
	}
	if snap := users.Snapshot(); len(snap.Users) != 0 {
		t.Errorf("a code over the cap signed someone up: %+v", snap.Users)
	}
}
