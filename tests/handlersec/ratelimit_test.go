package handlersec

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
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
	"github.com/authport/authport/handler"
	"github.com/authport/authport/tests/handlersec/stores"
)

// TestRateLimitAcrossInstances runs several handler instances (each its
// own server, Auth and handler, as behind a load balancer) sharing one
// store and one Redis rate-limit store, and sends concurrent sign-in
// e-mail requests for one address to all of them: the limit holds within
// one for the whole fleet, or a fleet would send a flood of e-mails to one
// address. With the in-process store
// each instance would allow the whole limit, which the last case shows.
func TestRateLimitAcrossInstances(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) ratelimit.Store
		want  func(instances int) (lo, hi int)
	}{
		{"redis", func(t *testing.T) ratelimit.Store {
			return redisrate.New(stores.RedisClient(t), redisrate.WithPrefix(randomName(t)+":"))
		}, func(int) (int, int) { return 5, 5 }},
		{"redis_cluster", func(t *testing.T) ratelimit.Store {
			c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: provision.RedisCluster(t)})
			t.Cleanup(func() { _ = c.Close() })
			return redisrate.New(c, redisrate.WithPrefix(randomName(t)+":"))
		}, func(int) (int, int) { return 5, 5 }},
		{"in_process_per_instance", nil, func(n int) (int, int) { return 5 * n, 5 * n }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var shared ratelimit.Store
			if tc.store != nil {
				shared = tc.store(t)
			}
			const instances, perInstance = 3, 12
			var sent atomic.Int64
			users := memory.New()
			var urls []string
			for range instances {
				srv := httptest.NewServer(nil)
				t.Cleanup(srv.Close)
				email := provider.Email("auth@example.com", func(context.Context, provider.VerificationRequest) error {
					sent.Add(1)
					return nil
				})
				a, err := auth.New(auth.Config{Adapter: users, Providers: []provider.Provider{email},
					Secrets: []string{secret}, BaseURL: srv.URL + "/auth"})
				if err != nil {
					t.Fatal(err)
				}
				h, err := handler.New(handler.Config{Auth: a, RateLimit: handler.RateLimit{Store: shared}})
				if err != nil {
					t.Fatal(err)
				}
				srv.Config.Handler = h
				urls = append(urls, srv.URL)
			}
			var wg sync.WaitGroup
			var refused, other atomic.Int64
			for i := range instances * perInstance {
				wg.Add(1)
				go func() {
					defer wg.Done()
					switch code := signInEmail(t, urls[i%instances], "ada@example.com"); code {
					case "ok":
					case "RateLimited":
						refused.Add(1)
					default:
						other.Add(1)
						t.Errorf("request %d: %s", i, code)
					}
				}()
			}
			wg.Wait()
			lo, hi := tc.want(instances)
			if n := int(sent.Load()); n < lo || n > hi || int(refused.Load()) != instances*perInstance-n {
				t.Errorf("%d concurrent requests for one address on %d instances: %d e-mails, %d refused; want %d-%d sent, the rest refused",
					instances*perInstance, instances, n, refused.Load(), lo, hi)
			}
		})
	}
}

// signInEmail runs one browser's e-mail sign-in request at the instance
// and returns "ok", or the error code it was refused with.
func signInEmail(t *testing.T, base, address string) string {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(base + "/auth/csrf")
	if err != nil {
		return err.Error()
	}
	var tok struct{ CSRFToken string }
	if err := decodeJSON(res, &tok); err != nil {
		return err.Error()
	}
	res, err = c.PostForm(base+"/auth/signin/email", url.Values{"csrfToken": {tok.CSRFToken}, "email": {address}})
	if err != nil {
		return err.Error()
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	switch {
	case res.StatusCode == http.StatusSeeOther && strings.Contains(loc, "/verify-request"):
		return "ok"
	case strings.Contains(loc, "error=RateLimited"):
		return "RateLimited"
	}
	return fmt.Sprintf("%d %s", res.StatusCode, loc)
}
