package handler

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
	"github.com/authport/authport/jwt/jwttest"
)

// authjsEnv is what Auth.js's setEnvDefaults made of an environment.
type authjsEnv struct {
	Secret           []string
	BasePath         string
	RedirectProxyURL string `json:"redirectProxyUrl"`
	Providers        []struct{ ID, ClientID, ClientSecret, Issuer string }
}

// runAuthjsEnv runs Auth.js's setEnvDefaults (testdata/authjs-env.mjs) on env
// with the built-in providers ids, each in Auth.js's function form.
func runAuthjsEnv(t *testing.T, env map[string]string, ids []string) authjsEnv {
	t.Helper()
	var res authjsEnv
	jwttest.RunNode(t, "", filepath.Join("testdata", "authjs-env.mjs"), filepath.Join(jwttest.AuthCore(), "index.js"),
		map[string]any{"env": env, "providers": ids}, &res)
	return res
}

// TestEnvLikeAuthJS gives the same AUTH_* variables to Auth.js's
// setEnvDefaults and to auth.SetEnvDefaults with providers.FromEnv, for every
// built-in OAuth/OIDC provider Auth.js also ships, and compares the secret
// list (AUTH_SECRET with AUTH_SECRET_1.._3 rotated in), the base path from
// AUTH_URL, the redirect proxy and each provider's client id, secret and
// issuer. It then checks authport's own addition: a comma-separated
// AUTH_SECRET is the same list as Auth.js's numbered variables.
func TestEnvLikeAuthJS(t *testing.T) {
	core := filepath.Join(jwttest.AuthCore(), "providers")
	var ids []string
	for _, id := range providers.BuiltIns().IDs() {
		p, _ := providers.BuiltIns().New(id, providers.UserConfig{})
		if _, ok := p.(provider.OAuthProvider); !ok {
			continue
		}
		if _, err := os.Stat(filepath.Join(core, id+".js")); err == nil {
			ids = append(ids, id)
		}
	}
	env := map[string]string{
		"AUTH_SECRET":             "current-secret-0123456789-0123456789-01",
		"AUTH_SECRET_1":           "older-secret-1-0123456789-0123456789-01",
		"AUTH_SECRET_2":           "older-secret-2-0123456789-0123456789-01",
		"AUTH_URL":                "https://app.example.com/api/auth",
		"AUTH_REDIRECT_PROXY_URL": "https://proxy.example.com/api/auth",
	}
	for _, id := range ids {
		x := provider.EnvPrefix(id)
		env[x+"_ID"], env[x+"_SECRET"], env[x+"_ISSUER"] = id+"-client-id", id+"-client-secret", "https://idp.example.com/"+id
	}
	getenv := func(k string) string { return env[k] }

	want := runAuthjsEnv(t, env, ids)
	if len(want.Providers) != len(ids) || len(ids) < 40 {
		t.Fatalf("Auth.js configured %d providers of %d (%v)", len(want.Providers), len(ids), ids)
	}
	providers, err := providers.FromEnv(getenv, ids...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := auth.Config{Providers: providers}
	auth.SetEnvDefaults(&cfg, getenv)
	if !slices.Equal(cfg.Secrets, want.Secret) {
		t.Errorf("Secrets = %q, Auth.js's secret = %q", cfg.Secrets, want.Secret)
	}
	if u, err := url.Parse(cfg.BaseURL); err != nil || u.Path != want.BasePath || u.Host != "app.example.com" {
		t.Errorf("BaseURL = %q, Auth.js's basePath = %q", cfg.BaseURL, want.BasePath)
	}
	if cfg.RedirectProxyURL != want.RedirectProxyURL {
		t.Errorf("RedirectProxyURL = %q, Auth.js's = %q", cfg.RedirectProxyURL, want.RedirectProxyURL)
	}
	for i, p := range cfg.Providers {
		o := p.(provider.OAuthProvider).Options()
		w := want.Providers[i]
		if w.ID != o.ID {
			// Auth.js's file ory-hydra.js makes a provider with id "hydra",
			// so it reads AUTH_HYDRA_*; authport's id is "ory-hydra".
			t.Logf("%s: Auth.js's provider of that name has id %q and reads %s_*", o.ID, w.ID, provider.EnvPrefix(w.ID))
			continue
		}
		if o.ID != w.ID || o.ClientID != w.ClientID || o.ClientSecret != w.ClientSecret {
			t.Errorf("%s: client %q/%q, Auth.js's %s: %q/%q", o.ID, o.ClientID, o.ClientSecret, w.ID, w.ClientID, w.ClientSecret)
		}
		// An issuer the provider fixes (Google's) wins over the variable on
		// both sides; one taken from the variable must be the variable's.
		if w.Issuer == env[provider.EnvPrefix(w.ID)+"_ISSUER"] && !strings.HasPrefix(o.Issuer, "https://idp.example.com/"+w.ID) {
			t.Errorf("%s: Issuer %q, Auth.js's %q", o.ID, o.Issuer, w.Issuer)
		}
	}

	// authport's comma-separated AUTH_SECRET: the same list as Auth.js's
	// numbered variables, newest first.
	comma := auth.Config{}
	auth.SetEnvDefaults(&comma, func(k string) string {
		if k == "AUTH_SECRET" {
			return strings.Join(want.Secret, ",")
		}
		return ""
	})
	if !slices.Equal(comma.Secrets, want.Secret) {
		t.Errorf("AUTH_SECRET=%q gives %q; want %q", strings.Join(want.Secret, ","), comma.Secrets, want.Secret)
	}

	// An AUTH_URL naming only the origin mounts the routes at /auth, and
	// a value set in the Config wins over the environment.
	origin := auth.Config{BaseURL: "", Secrets: []string{"kept-secret-0123456789-0123456789-012"}}
	auth.SetEnvDefaults(&origin, func(k string) string {
		return map[string]string{"AUTH_URL": "http://localhost:3000", "AUTH_SECRET": "ignored"}[k]
	})
	if origin.BaseURL != "http://localhost:3000/auth" || !slices.Equal(origin.Secrets, []string{"kept-secret-0123456789-0123456789-012"}) {
		t.Errorf("origin-only AUTH_URL, Secrets given: BaseURL %q, Secrets %q", origin.BaseURL, origin.Secrets)
	}
}
