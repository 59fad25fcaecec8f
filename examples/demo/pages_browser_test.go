package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/handler"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// pageImage is what the page says of one of its images once loaded.
type pageImage struct {
	Src          string `json:"src"`
	Complete     bool   `json:"complete"`
	NaturalWidth int    `json:"naturalWidth"`
}

// images waits for the page to finish loading and returns its images.
func images(b *tab) []pageImage {
	b.t.Helper()
	b.waitURL("the page to load", func(*url.URL) bool { return true })
	return get(b, "read the images", chromedp.Evaluate[[]pageImage](
		`Array.from(document.images).map(i => ({src: i.src, complete: i.complete, naturalWidth: i.naturalWidth}))`))
}

// builtInSite serves the handler's sign-in page with built-in providers on
// l, with logos from logos (Theme.ProviderLogos) when not empty; the site
// serves a small SVG for every path under /logos/.
func builtInSite(t *testing.T, l listener, logos string) {
	t.Helper()
	secret := randomName("builtins-secret-0123456789-0123456789-")
	providers := []provider.Provider{
		providers.GitHub("id", "secret"), providers.Google("id", "secret"), providers.GitLab("id", "secret"),
		providers.Discord("id", "secret"), providers.Apple("id", "secret"), providers.Slack("id", "secret"),
	}
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: providers, Secrets: []string{secret}, BaseURL: l.origin + "/auth"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler.New(handler.Config{Auth: a, Theme: handler.Theme{ProviderLogos: logos}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", h)
	mux.HandleFunc("GET /logos/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24"><circle cx="12" cy="12" r="10"/></svg>`))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l.ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// TestPagesInBrowser: the sign-in page with built-in providers loads no
// broken image (each img's naturalWidth, read in the page), with or without
// logos configured; the per-provider page; the passkey registration page's
// wording and a registration through it; the dark theme.
func TestPagesInBrowser(t *testing.T) {
	browser := newBrowser(t)
	if browser == nil {
		return
	}
	t.Run("built-in logos", func(t *testing.T) {
		for _, c := range []struct{ name, logos string }{{"omitted", ""}, {"served", "/logos"}} {
			l := listen(t)
			builtInSite(t, l, c.logos)
			b := newTab(t, browser)
			b.run("open the sign-in page", chromedp.Navigate(l.origin+"/auth/signin"))
			imgs := images(b)
			b.screenshot("signin-builtins-logos-" + c.name)
			for _, img := range imgs {
				if !img.Complete || img.NaturalWidth == 0 {
					t.Errorf("%s: broken image %s", c.name, img.Src)
				}
			}
			if want := map[string]int{"omitted": 0, "served": 6}[c.name]; len(imgs) != want {
				t.Errorf("%s: %d images, want %d: %+v", c.name, len(imgs), want, imgs)
			}
			if got := b.text(); !strings.Contains(got, "Sign in with GitHub") || !strings.Contains(got, "Sign in with Slack") {
				t.Errorf("%s: the buttons are missing: %q", c.name, got)
			}
		}
	})

	t.Run("per-provider page and theme", func(t *testing.T) {
		l := listen(t)
		builtInSite(t, l, "")
		b := newTab(t, browser)
		b.run("open GitHub's page", chromedp.Navigate(l.origin+"/auth/signin/github"))
		b.waitPath("/auth/signin/github")
		title := get(b, "read the title", chromedp.Title())
		if got := b.text(); title != "Sign in with GitHub" || !strings.Contains(got, "Sign in with GitHub") || strings.Contains(got, "Google") {
			b.fatalf("GET /auth/signin/github: title %q, text %q; want GitHub alone", title, got)
		}
		checkThemes(t, b, "signin-github")
	})

	t.Run("passkey registration page", func(t *testing.T) {
		box := startMailbox(t)
		l := listen(t)
		a := serve(t, l, appConfig{DB: "memory", SMTP: box.URL()})
		b := newTab(t, browser)
		authID := addVirtualAuthenticator(b)
		email := randomName("reg.") + "@example.com"
		signInByEmail(t, b, a, box, l.origin, email, 0)
		b.run("follow Add a passkey", clickText("Add a passkey"))
		b.waitPath("/auth/signin/passkey")
		title := get(b, "read the title", chromedp.Title())
		heading := get(b, "read the heading", chromedp.Text(chromedp.CSS("h1")))
		fields := get(b, "count the e-mail fields", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('input[type="email"]')).map(i => i.value)`))
		buttons := get(b, "read the buttons", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("button")).map(x => x.textContent.trim())`))
		b.screenshot("passkey-register-page")
		if title != "Create a passkey" || heading != "Create a passkey" || len(fields) != 1 || fields[0] != email ||
			len(buttons) != 1 || buttons[0] != "Create passkey" {
			b.fatalf("registration page: title %q, heading %q, e-mail fields %q, buttons %q; want \"Create a passkey\", one field holding %s, one \"Create passkey\" button",
				title, heading, fields, buttons, email)
		}
		b.run("create the passkey", chromedp.Click(byText("Create passkey"), chromedp.NodeVisible))
		b.waitPath("/")
		if n := len(authenticators(t, a, email)); n != 1 {
			b.fatalf("after Create passkey the user has %d authenticators, want 1", n)
		}
		if creds := virtualCredentials(t, b, authID); len(creds) != 1 {
			t.Errorf("the virtual authenticator holds %d credentials, want 1", len(creds))
		}
	})
}

// checkThemes shows the built-in page the tab is on in the light and the
// dark scheme (prefers-color-scheme, emulated), checks the card's colour
// in each and saves a screenshot of each as name-light and name-dark.
func checkThemes(t *testing.T, b *tab, name string) {
	t.Helper()
	for _, scheme := range []struct{ pref, bg string }{{"light", "rgb(255, 255, 255)"}, {"dark", "rgb(13, 17, 23)"}} {
		b.run("prefer "+scheme.pref, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme.pref}}})
			return chromedp.Void{}, err
		})
		bg := get(b, "read the card's colour", chromedp.Evaluate[string](`getComputedStyle(document.querySelector("main")).backgroundColor`))
		if bg != scheme.bg {
			t.Errorf("%s: prefers-color-scheme: %s: the card is %s, want %s", name, scheme.pref, bg, scheme.bg)
		}
		b.screenshot(name + "-" + scheme.pref)
	}
}
