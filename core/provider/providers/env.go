package providers

import (
	"fmt"

	"github.com/authport/authport/core/provider"
)

// UserConfigFromEnv reads what a built-in provider needs from the
// environment variables Auth.js reads for it, where X is [provider.EnvPrefix] of id:
// X_ID and X_SECRET (the client credentials), X_ISSUER, X_KEY (an e-mail
// service's API key, Auth.js's apiKey) and, authport's own, X_TENANT
// ([UserConfig.Tenant]) and X_FROM (an e-mail service's sender). For
// "microsoft-entra-id", X_ISSUER (https://login.microsoftonline.com/<tenant>/v2.0,
// as Auth.js takes it) stands for the tenant when X_TENANT is unset.
// getenv is usually [os.Getenv].
func UserConfigFromEnv(id string, getenv func(string) string) UserConfig {
	x := provider.EnvPrefix(id)
	c := UserConfig{
		ClientID: getenv(x + "_ID"), ClientSecret: getenv(x + "_SECRET"),
		Issuer: getenv(x + "_ISSUER"), Tenant: getenv(x + "_TENANT"),
		EmailService: EmailServiceConfig{APIKey: getenv(x + "_KEY"), From: getenv(x + "_FROM")},
	}
	if id == "microsoft-entra-id" && c.Tenant == "" {
		// Auth.js configures Entra ID by its issuer URL, which names the
		// tenant; MicrosoftEntraID accepts that URL as its tenant.
		c.Tenant = c.Issuer
	}
	return c
}

// FromEnv builds the built-in providers named by ids, each configured by
// [UserConfigFromEnv], as Auth.js configures a provider given as a function
// (providers: [GitHub]) from AUTH_GITHUB_ID and AUTH_GITHUB_SECRET. It
// fails for an id [BuiltIns] does not hold; a variable left unset shows
// later, when [provider.Validate] reports the missing field by provider and name.
func FromEnv(getenv func(string) string, ids ...string) ([]provider.Provider, error) {
	r := BuiltIns()
	out := make([]provider.Provider, 0, len(ids))
	for _, id := range ids {
		p, err := r.New(id, UserConfigFromEnv(id, getenv))
		if err != nil {
			return nil, fmt.Errorf("provider from the environment: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}
