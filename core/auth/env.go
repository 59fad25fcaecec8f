package auth

import (
	"strings"

	"github.com/authport/authport/core/provider"
)

// DefaultBasePath is where the routes are mounted when AUTH_URL names only
// an origin: Auth.js's default base path.
const DefaultBasePath = "/auth"

// SetEnvDefaults fills what cfg leaves empty from the environment variables
// Auth.js reads (its setEnvDefaults); getenv is usually [os.Getenv]:
//
//   - Secrets, when empty: AUTH_SECRET, then AUTH_SECRET_1, _2 and _3 put
//     before it, as Auth.js orders them (the first signs, all verify).
//     authport also splits each value at commas, so AUTH_SECRET="new,old"
//     rotates a secret with one variable (a secret made by `npx auth
//     secret` or cmd/authport-secret holds no comma).
//   - BaseURL, when empty: AUTH_URL; when that names only an origin
//     ("https://example.com"), [DefaultBasePath] is appended.
//   - RedirectProxyURL, when empty: AUTH_REDIRECT_PROXY_URL.
//   - Each OAuth or OIDC provider's empty ClientID, ClientSecret and Issuer:
//     AUTH_<ID>_ID, AUTH_<ID>_SECRET, AUTH_<ID>_ISSUER
//     ([provider.SetEnvDefaults]; the providers are changed in place).
//
// Build built-in providers from the same variables with
// providers.FromEnv (package core/provider/providers). [New] checks the
// result as usual.
func SetEnvDefaults(cfg *Config, getenv func(string) string) {
	if len(cfg.Secrets) == 0 {
		cfg.Secrets = splitSecrets(getenv("AUTH_SECRET"))
		for _, n := range []string{"1", "2", "3"} {
			cfg.Secrets = append(splitSecrets(getenv("AUTH_SECRET_"+n)), cfg.Secrets...)
		}
	}
	if cfg.BaseURL == "" {
		if v := strings.TrimSpace(getenv("AUTH_URL")); v != "" {
			cfg.BaseURL = v
			if u, err := parseBase(v); err == nil && (u.Path == "" || u.Path == "/") {
				u.Path = DefaultBasePath
				cfg.BaseURL = u.String()
			}
		}
	}
	if cfg.RedirectProxyURL == "" {
		cfg.RedirectProxyURL = getenv("AUTH_REDIRECT_PROXY_URL")
	}
	for _, p := range cfg.Providers {
		provider.SetEnvDefaults(p, getenv)
	}
}

// splitSecrets splits a comma-separated list, dropping spaces around each
// secret and empty entries.
func splitSecrets(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
