package handler_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/ratelimit"
	"github.com/authport/authport/handler"
)

func emailEnv(t *testing.T, rl handler.RateLimit) (*env, *smtpServer) {
	return emailEnvWith(t, handler.Config{RateLimit: rl})
}

// emailEnvWith is emailEnv with the handler's rate limits and trusted
// proxies taken from cfg.
func emailEnvWith(t *testing.T, cfg handler.Config) (*env, *smtpServer) {
	smtp := startSMTP(t)
	e := newEnv(t, envOpts{
		strategy: auth.StrategyJWT,
		providers: func(t *testing.T, base string) []provider.Provider {
			return []provider.Provider{smtp.emailProvider(t), credentials()}
		},
		config: func(c *handler.Config) { c.RateLimit, c.TrustedProxies = cfg.RateLimit, cfg.TrustedProxies },
	})
	return e, smtp
}

// TestEmailRateLimit: 30 requests for one address send the default 5
// e-mails (without a limit they sent 30, a mail bomb for the address's
// owner); the others are refused with
// RateLimited on the sign-in page, or 429 in JSON, with Retry-After.
func TestEmailRateLimit(t *testing.T) {
	e, smtp := emailEnv(t, handler.RateLimit{})
	refused := 0
	var last response
	for i := range 30 {
		// The address in any spelling counts as one.
		addr := []string{"ada@example.com", " Ada@Example.COM"}[i%2]
		res := e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {addr}})
		if strings.Contains(res.Header.Get("Location"), "error=RateLimited") {
			refused++
			last = res
		}
	}
	if n := len(smtp.Messages()); n != handler.DefaultRateLimit().EmailPerAddress.Events || refused != 30-n {
		t.Fatalf("30 requests for one address: %d e-mails sent, %d refused; want %d sent, the rest refused", n, refused, handler.DefaultRateLimit().EmailPerAddress.Events)
	}
	wantLocation(t, e, last, "/auth/signin", "error", "RateLimited")
	if ra := last.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After %q", ra)
	}
	page := e.get(last.Header.Get("Location"))
	if !strings.Contains(page.body, "Too many attempts") {
		t.Errorf("the sign-in page does not explain the refusal:\n%s", page.body)
	}
	res := e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {"ada@example.com"}}, "Accept", "application/json")
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(res.body, `"error":"RateLimited"`) || res.Header.Get("Retry-After") == "" {
		t.Errorf("JSON refusal: %d %s (Retry-After %q); want 429 RateLimited", res.StatusCode, res.body, res.Header.Get("Retry-After"))
	}

	// Many addresses from one client: the per-client limit stops them.
	e, smtp = emailEnv(t, handler.RateLimit{})
	for i := range 40 {
		e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {fmt.Sprintf("user%d@example.com", i)}})
	}
	if n := len(smtp.Messages()); n != handler.DefaultRateLimit().EmailPerClient.Events {
		t.Errorf("40 addresses from one client: %d e-mails, want %d", n, handler.DefaultRateLimit().EmailPerClient.Events)
	}
}

// TestRateLimitDisabled is Auth.js's behaviour, on request: no limit.
func TestRateLimitDisabled(t *testing.T) {
	e, smtp := emailEnv(t, handler.RateLimit{Disabled: true})
	for range 30 {
		e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {"ada@example.com"}})
	}
	if n := len(smtp.Messages()); n != 30 {
		t.Errorf("%d e-mails, want 30 with RateLimit.Disabled", n)
	}
}

// TestCredentialsRateLimit: wrong passwords for one username run into the
// per-identifier limit, which then refuses the right one too; another
// username still signs in until the per-client limit.
func TestCredentialsRateLimit(t *testing.T) {
	e, _ := emailEnv(t, handler.RateLimit{SignInPerClient: ratelimit.Limit{Events: 15, Period: time.Hour}})
	for range handler.DefaultRateLimit().SignInPerIdentifier.Events {
		res := e.signInCredentials("ada", "wrong", nil)
		wantLocation(t, e, res, "/auth/signin", "error", "CredentialsSignin")
	}
	res := e.signInCredentials("ADA ", "lovelace", nil)
	wantLocation(t, e, res, "/auth/signin", "error", "RateLimited")
	res = e.signInCredentials("grace", "x", nil)
	wantLocation(t, e, res, "/auth/signin", "error", "CredentialsSignin")
	// 12 attempts so far; the client's 15 an hour end with the 16th.
	for range 3 {
		e.signInCredentials("grace", "x", nil)
	}
	res = e.signInCredentials("grace", "x", nil)
	wantLocation(t, e, res, "/auth/signin", "error", "RateLimited")
	// The limits run on the Auth's clock (Config.Now): an hour later by
	// it, the right password signs in again.
	e.clock.Add(time.Hour + time.Minute)
	res = e.signInCredentials("ada", "lovelace", nil)
	if loc := res.Header.Get("Location"); strings.Contains(loc, "error=") {
		t.Errorf("an hour later by Config.Now: %d %s", res.StatusCode, loc)
	}
}

// TestClientKeyForwardedFor: X-Forwarded-For counts only for a request
// from a trusted proxy.
func TestClientKeyForwardedFor(t *testing.T) {
	limit := ratelimit.Limit{Events: 2, Period: time.Hour}
	for _, tc := range []struct {
		trusted []netip.Prefix
		want    int // e-mails sent for 6 requests from "different" forwarded addresses
	}{{nil, 2}, {[]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}, 6}} {
		e, smtp := emailEnvWith(t, handler.Config{RateLimit: handler.RateLimit{EmailPerClient: limit}, TrustedProxies: tc.trusted})
		for i := range 6 {
			e.post("/auth/signin/email", url.Values{"csrfToken": {e.csrf()}, "email": {fmt.Sprintf("u%d@example.com", i)}},
				"X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i))
		}
		if n := len(smtp.Messages()); n != tc.want {
			t.Errorf("TrustedProxies %v: %d e-mails for 6 forwarded addresses, want %d", tc.trusted, n, tc.want)
		}
	}
}

// TestClientIP: the walk from the right past trusted proxies.
func TestClientIP(t *testing.T) {
	lb := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	for _, tc := range []struct {
		remote, xff string
		trusted     []netip.Prefix
		want        string
	}{
		{"10.0.0.1:5555", "203.0.113.9, 198.51.100.7", nil, "10.0.0.1"},              // no proxy trusted: the header is ignored
		{"192.0.2.4:5555", "203.0.113.9", lb, "192.0.2.4"},                           // not from a trusted proxy: ignored
		{"10.0.0.1:5555", "203.0.113.9, 198.51.100.7", lb, "198.51.100.7"},           // the proxy's word on its client
		{"10.0.0.1:5555", "203.0.113.9, 198.51.100.7, 10.1.2.3", lb, "198.51.100.7"}, // two trusted hops
		{"10.0.0.1:5555", "spoofed, 10.1.2.3", lb, "10.1.2.3"},                       // junk ends the walk at the last trusted hop
		{"10.0.0.1:5555", "", lb, "10.0.0.1"},
		{"10.0.0.1:5555", "10.9.9.9", lb, "10.9.9.9"}, // every hop trusted: the leftmost
		{"[2001:db8:ffff::1]:443", "2001:db8:1:2:3:4:5:6", lb, "2001:db8:1:2:3:4:5:6"},
		{"[::ffff:10.0.0.1]:443", "::ffff:198.51.100.1", lb, "198.51.100.1"}, // mapped addresses unmapped
		{"@", "198.51.100.1", lb, "invalid IP"},                              // not an IP connection
	} {
		r := requestFrom(t, tc.remote, tc.xff)
		if got := handler.ClientIP(r, tc.trusted).String(); got != tc.want {
			t.Errorf("ClientIP(%s, XFF %q, %v) = %s, want %s", tc.remote, tc.xff, tc.trusted, got, tc.want)
		}
	}
	// Two X-Forwarded-For headers are one list, the last header rightmost.
	r := requestFrom(t, "10.0.0.1:1", "203.0.113.1")
	r.Header.Add("X-Forwarded-For", "10.2.2.2")
	if got := handler.ClientIP(r, lb).String(); got != "203.0.113.1" {
		t.Errorf("ClientIP over two headers = %s, want 203.0.113.1", got)
	}
}

func requestFrom(t *testing.T, remote, xff string) *http.Request {
	r, err := http.NewRequest("GET", "http://app.example/auth/session", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.RemoteAddr = remote
	if xff != "" {
		r.Header.Set("X-Forwarded-For", xff)
	}
	return r
}

// TestRateLimitConfig: an unusable limit is a configuration error.
func TestRateLimitConfig(t *testing.T) {
	a, err := auth.New(auth.Config{Adapter: memoryStore(), Providers: []provider.Provider{credentials()}, Secrets: []string{secret},
		BaseURL: "http://app.example/auth", Session: auth.SessionOptions{Strategy: auth.StrategyJWT}})
	if err != nil {
		t.Fatal(err)
	}
	for _, rl := range []handler.RateLimit{
		{EmailPerAddress: ratelimit.Limit{Events: 5}},
		{SignInPerClient: ratelimit.Limit{Period: time.Hour}},
	} {
		if _, err := handler.New(handler.Config{Auth: a, RateLimit: rl}); !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("%+v: %v; want core.ErrInvalidConfig", rl, err)
		}
	}
	if _, err := handler.New(handler.Config{Auth: a, TrustedProxies: []netip.Prefix{{}}}); !errors.Is(err, core.ErrInvalidConfig) {
		t.Errorf("an invalid trusted proxy prefix: %v; want core.ErrInvalidConfig", err)
	}
	if _, err := handler.New(handler.Config{Auth: a, RateLimit: handler.RateLimit{SignInPerClient: ratelimit.Limit{Events: -1}}}); err != nil {
		t.Errorf("a limit turned off: %v", err)
	}
}
