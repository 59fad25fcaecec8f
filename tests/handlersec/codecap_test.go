package handlersec

import (
	"context"
	"strings"
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

// admitCounter is the rate-limit store as each instance sees it: the
// shared store, unchanged, counting the code attempts it admitted (keys
// of core/auth's code cap) across every instance that holds it.
type admitCounter struct {
	ratelimit.Store
	admitted *atomic.Int64
}

func (c admitCounter) Allow(ctx context.Context, key string, l ratelimit.Limit) (ratelimit.Result, error) {
	res, err := c.Store.Allow(ctx, key, l)
	if err == nil && res.Allowed && strings.HasPrefix(key, "authport:code:") {
		c.admitted.Add(1)
	}
	return res, err
}

// TestCodeAttemptCapAcrossInstances runs four core/auth instances (as
// behind a load balancer) on one user store and one rate-limit store, and
// has them all guess the one-time code of one e-mail sign-in at once:
// across the four, exactly the cap (provider.DefaultCodeAttempts) of
// guesses is admitted to the comparison, never more, every guess is
// refused, and the right code after the cap is refused too (no session).
// The link of the same e-mail still signs in: the cap is on codes. It
// counts admissions, not time. With adapters/redis/ratelimit on Redis
// Cluster the cap holds for the fleet; with an in-process store per
// instance each admits the whole cap (the last case: the count can fail).
func TestCodeAttemptCapAcrossInstances(t *testing.T) {
	const instances, guessesPerInstance = 4, 10
	const capacity = provider.DefaultCodeAttempts
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) ratelimit.Store // nil: one ratelimit.Memory per instance
		want  int
	}{
		{"redis_cluster", func(t *testing.T) ratelimit.Store {
			c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: provision.RedisCluster(t)})
			t.Cleanup(func() { _ = c.Close() })
			return redisrate.New(c, redisrate.WithPrefix(randomName(t)+":"))
		}, capacity},
		{"in_process_per_instance", nil, instances * capacity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var shared ratelimit.Store
			if tc.store != nil {
				shared = tc.store(t)
			}
			var admitted atomic.Int64
			var mu sync.Mutex
			var mails []provider.VerificationRequest
			users := memory.New()
			var fleet []*auth.Auth
			for range instances {
				email := provider.Email("auth@example.com", func(_ context.Context, r provider.VerificationRequest) error {
					mu.Lock()
					mails = append(mails, r)
					mu.Unlock()
					return nil
				})
				email.Codes = true
				store := shared
				if store == nil {
					store = ratelimit.NewMemory()
				}
				a, err := auth.New(auth.Config{Adapter: users, Providers: []provider.Provider{email},
					Secrets: []string{secret}, BaseURL: "https://app.example/auth", Logger: discard(),
					RateLimiter: admitCounter{store, &admitted}})
				if err != nil {
					t.Fatal(err)
				}
				fleet = append(fleet, a)
			}
			address := randomName(t) + "@example.com"
			const binding = "browser-binding"
			if _, err := fleet[0].StartEmailSignInWithCode(ctx, "email", address, binding); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if len(mails) != 1 || len(mails[0].Code) != 6 {
				mu.Unlock()
				t.Fatalf("mails after asking for a code: %+v; want one with a 6-digit code", mails)
			}
			mail := mails[0]
			mu.Unlock()
			wrong := "000000"
			if mail.Code == wrong {
				wrong = "000001"
			}

			var wg sync.WaitGroup
			var signedIn, otherErr atomic.Int64
			start := make(chan struct{})
			for i := range instances * guessesPerInstance {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, err := fleet[i%instances].VerifyEmailSignInCode(ctx, "email", address, wrong, binding)
					switch {
					case err == nil:
						signedIn.Add(1)
					case auth.CodeOf(err) != auth.CodeVerification:
						otherErr.Add(1)
						t.Errorf("guess %d: %v; want the code refused (Verification)", i, err)
					}
				}()
			}
			close(start)
			wg.Wait()
			if n := signedIn.Load(); n != 0 {
				t.Errorf("%d wrong guesses signed in", n)
			}
			got := int(admitted.Load())
			if got != tc.want {
				t.Errorf("%d concurrent guesses on %d instances: %d admitted to the comparison; want %d (cap %d)",
					instances*guessesPerInstance, instances, got, tc.want, capacity)
			}
			if tc.store == nil {
				return // each instance has its cap left: the right code would work
			}
			for i, a := range fleet {
				if _, err := a.VerifyEmailSignInCode(ctx, "email", address, mail.Code, binding); auth.CodeOf(err) != auth.CodeVerification {
					t.Errorf("the right code after the cap, at instance %d: %v; want it refused (Verification)", i, err)
				}
			}
			if got := int(admitted.Load()); got != capacity {
				t.Errorf("the right code was admitted to the comparison after the cap: %d admissions; want %d", got, capacity)
			}
			if ss, _ := users.GetUserByEmail(ctx, address); ss != nil {
				t.Errorf("a code over the cap made the user %+v", ss)
			}
			// The cap is on codes: the link of the same e-mail signs in.
			if _, err := fleet[3].VerifyEmailSignIn(ctx, "email", address, mail.Token); err != nil {
				t.Errorf("the e-mail's link after the code cap: %v", err)
			}
		})
	}
}
