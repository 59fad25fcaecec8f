package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/core"
	"github.com/authport/authport/oauth/oauthtest"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	goredis "github.com/redis/go-redis/v9"
)

// The browser tests run the demo in-process on 127.0.0.1, browsed at
// http://localhost:PORT (a secure context, and a host name for the passkey
// relying party id), with Debian's chromium driven over the DevTools
// protocol. Each scenario runs once per backend.

// Timeouts of one browser step and of one whole scenario.
const (
	stepTimeout     = 30 * time.Second
	scenarioTimeout = 3 * time.Minute
)

// backend is an adapter the scenarios run on: db returns the demo's -db
// value for a store private to the test.
type backend struct {
	name string
	db   func(t *testing.T) string
}

func backends() []backend {
	return []backend{
		{"bbolt", func(t *testing.T) string { return "bbolt:" + filepath.Join(t.TempDir(), "demo.db") }},
		{"postgres", postgresDB},
		{"redis", redisDB},
	}
}

// randomName returns a fresh lowercase identifier starting with prefix.
func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// postgresDB returns a URL whose search_path is a schema made for t alone,
// dropped when t ends.
func postgresDB(t *testing.T) string {
	return oauthtest.PostgresSchema(t, provision.Postgres(t), "demo_")
}

// redisDB returns a Redis URL with a key prefix for t alone; its keys are
// deleted when t ends.
func redisDB(t *testing.T) string {
	base := provision.Redis(t)
	opt, err := goredis.ParseURL(base)
	if err != nil {
		t.Fatalf("AUTHPORT_REDIS_URL: %v", err)
	}
	prefix := randomName("demo-") + ":"
	t.Cleanup(func() {
		c := goredis.NewClient(opt)
		defer c.Close()
		ctx := context.Background()
		// The server may hold millions of other keys: large SCAN steps.
		iter := c.Scan(ctx, 0, prefix+"*", 100000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("delete the keys under %s: %v", prefix, err)
		}
	})
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("prefix", prefix)
	u.RawQuery = q.Encode()
	return u.String()
}

// listener is the demo's port, taken before the app is built (dex needs the
// redirect URI first).
type listener struct {
	ln     net.Listener
	origin string // http://localhost:PORT
}

func listen(t *testing.T) listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return listener{ln: ln, origin: "http://localhost:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)}
}

// serve builds the demo from cfg (URL set to l's origin) and serves it on l
// until t ends.
func serve(t *testing.T, l listener, cfg appConfig) *app {
	t.Helper()
	cfg.URL = l.origin
	if cfg.Secret == "" {
		cfg.Secret = randomName("demo-harness-secret-")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := newApp(ctx, cfg)
	if err != nil {
		t.Fatalf("newApp: %v", err)
	}
	srv := &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l.ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := a.Close(); err != nil {
			t.Errorf("close the store: %v", err)
		}
	})
	return a
}

// browserFlags are the only flags Chromium gets (besides chromedp's
// --remote-debugging-port=0): without them it stalls on a closed network,
// reaching for Google's services.
func browserFlags(bin, dataDir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(dataDir),
	}
}

// chromiumBinEnv names the Chromium binary the browser tests drive;
// scripts/services.sh installs Debian's chromium and prints it.
const chromiumBinEnv = "AUTHPORT_CHROMIUM_BIN"

// chromium returns the binary chromiumBinEnv names. Without it t is
// skipped, or failed when AUTHPORT_REQUIRE names chromium or is all, and ""
// returned.
func chromium(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(chromiumBinEnv)
	if bin == "" {
		why := "no Chromium: set " + chromiumBinEnv + " to a chromium binary (eval \"$(scripts/services.sh)\" installs Debian's chromium)"
		if provision.Required("chromium") {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return bin
}

// newBrowser starts one headless Chromium for a test function; it is
// closed when t ends. It returns nil when Chromium is missing and t was
// skipped.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	bin := chromium(t)
	if bin == "" {
		return nil
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), browserFlags(bin, t.TempDir())...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first Run starts the browser, whose life is bound to the context
	// that Run gets: so it gets bctx, and the wait is bounded here.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("%s did not answer on the DevTools protocol within a minute", bin)
	}
	return bctx
}

// tab is one scenario's page, in a browser context of its own (its own
// cookies: every demo is on localhost, and cookies ignore ports).
type tab struct {
	t   *testing.T
	ctx context.Context
}

func newTab(t *testing.T, browser context.Context) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	deadline, cancelDeadline := context.WithTimeout(ctx, scenarioTimeout)
	t.Cleanup(cancelDeadline)
	return &tab{t: t, ctx: deadline}
}

// run runs one step; on failure it fails the test with what, the page's
// URL and its HTML.
func (b *tab) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.dump())
	}
}

// get runs one action returning a value, failing the test as run does.
func get[T any](b *tab, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.dump())
	}
	return v
}

// fatalf fails the test with the page's URL and HTML.
func (b *tab) fatalf(format string, args ...any) {
	b.t.Helper()
	b.t.Fatalf(format+"\n%s", append(args, b.dump())...)
}

// dump returns the page's URL and HTML, for a failure message.
func (b *tab) dump() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return fmt.Sprintf("(the page could not be read: %v)", err)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	if err != nil {
		return fmt.Sprintf("page %s (its HTML could not be read: %v)", loc, err)
	}
	const max = 8000
	if len(html) > max {
		html = html[:max] + "…"
	}
	return "page " + loc + ":\n" + html
}

// location returns the page's URL.
func (b *tab) location() *url.URL {
	b.t.Helper()
	loc := get(b, "read the location", chromedp.Location())
	u, err := url.Parse(loc)
	if err != nil {
		b.fatalf("location %q: %v", loc, err)
	}
	return u
}

// text returns the visible text of the page's body.
func (b *tab) text() string {
	b.t.Helper()
	return get(b, "read the page", chromedp.Text(chromedp.CSS("body")))
}

// cookie returns the value of the browser's cookie name for the page, or "".
func (b *tab) cookie(name string) string {
	b.t.Helper()
	res := get(b, "read the cookies", func(ctx context.Context, t *chromedp.Target) (network.GetCookiesResult, error) {
		return cdp.Call(ctx, t, network.GetCookies, network.GetCookiesParams{})
	})
	for _, c := range res.Cookies {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// screenshot saves a PNG of the whole page in $AUTHPORT_LOG_DIR (t's temp
// directory without it) and logs its path.
func (b *tab) screenshot(name string) string {
	b.t.Helper()
	png := get(b, "screenshot", chromedp.FullScreenshot(100))
	dir := os.Getenv("AUTHPORT_LOG_DIR")
	if dir == "" {
		dir = b.t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatalf("AUTHPORT_LOG_DIR: %v", err)
	}
	path := filepath.Join(dir, "demo-"+regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(name, "-")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatalf("save the screenshot: %v", err)
	}
	b.t.Logf("screenshot: %s", path)
	return path
}

// waitPath waits until the page's path is path.
func (b *tab) waitPath(path string) {
	b.t.Helper()
	b.waitURL("the page "+path, func(u *url.URL) bool { return u.Path == path })
}

// waitURL waits until the page's URL satisfies ok; what says what is
// awaited, for the failure message.
func (b *tab) waitURL(what string, ok func(*url.URL) bool) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	var loc string
	for {
		if l, err := chromedp.Run(ctx, chromedp.Location()); err == nil {
			loc = l
			// The page counts once it has loaded, not when its URL commits.
			if u, err := url.Parse(loc); err == nil && ok(u) {
				if state, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.readyState")); err == nil && state == "complete" {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			b.fatalf("waited %s for %s; still on %s", stepTimeout, what, loc)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// navigate opens target and waits for the page the redirects end on. A
// navigation that ends on an unreachable host (an open redirect to
// evil.example, say) is not an error here: the caller checks the location.
func (b *tab) navigate(target string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(target)); err != nil && ctx.Err() != nil {
		b.fatalf("open %s: %v", target, err)
	}
	b.run("wait for the page", chromedp.WaitReady(chromedp.CSS("body")))
}

// sessionOf returns the session the adapter holds for token, or nil.
func sessionOf(t *testing.T, a *app, token string) *core.SessionAndUser {
	t.Helper()
	return lookUp(t, a, "GetSessionAndUser", func(g core.SessionAndUserGetter) (*core.SessionAndUser, error) {
		return g.GetSessionAndUser(context.Background(), token)
	})
}

// userByEmail returns the adapter's user with email, or nil.
func userByEmail(t *testing.T, a *app, email string) *core.User {
	t.Helper()
	return lookUp(t, a, "GetUserByEmail", func(g core.UserByEmailGetter) (*core.User, error) {
		return g.GetUserByEmail(context.Background(), email)
	})
}

// lookUp returns what get finds through the app's adapter as a G, failing
// t when the adapter lacks the method, or when the lookup fails.
func lookUp[G, V any](t *testing.T, a *app, method string, get func(G) (V, error)) V {
	t.Helper()
	g, ok := a.store.adapter.(G)
	if !ok {
		t.Fatalf("%T has no %s", a.store.adapter, method)
	}
	v, err := get(g)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return v
}
