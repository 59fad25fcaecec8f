package provider

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// UserConfig is what a user supplies to a built-in provider through a
// [Registry] (the spec's OAuthUserConfig, reduced to what the built-ins
// need).
type UserConfig struct {
	// ClientID and ClientSecret are the client credentials the provider
	// issued.
	ClientID, ClientSecret string
	// Issuer is the issuer URL, for providers that have one per deployment:
	// Keycloak (…/realms/{realm}), Okta, Auth0 (a domain such as
	// "example.eu.auth0.com" is accepted too).
	Issuer string
	// Tenant is the Microsoft Entra ID tenant: a tenant id, a domain, or
	// "common", "organizations" or "consumers". Empty means "common".
	Tenant string
	// EmailService is what the e-mail delivery services ("forwardemail",
	// "mailgun", "postmark", "resend", "sendgrid") need.
	EmailService EmailServiceConfig
}

// Factory builds a built-in provider from what the user supplies. It
// returns a fresh value on every call.
type Factory func(c UserConfig) Provider

// Registry maps built-in provider identifiers to their factories (SPEC
// §2.1 BuiltInProviders). It is an ordinary map: add your own factories to
// it, or delete the ones you do not want.
type Registry map[string]Factory

// ErrUnknownProvider is returned, wrapped, by [Registry.New] for an
// identifier the registry does not hold.
var ErrUnknownProvider = errors.New("unknown built-in provider")

// BuiltIns returns a new [Registry] of every built-in provider: "apple",
// "auth0", "discord", "github", "gitlab", "google", "keycloak", "linkedin",
// "microsoft-entra-id", "okta", "slack", "twitch"; the e-mail delivery
// services "forwardemail", "mailgun", "postmark", "resend" and "sendgrid"
// (configured by [UserConfig.EmailService]); and the defaults "email",
// "credentials" and "passkey".
//
// The e-mail and credentials defaults need a callback that a [UserConfig]
// cannot carry: set [EmailConfig.From] and
// [EmailConfig.SendVerificationRequest], or [CredentialsConfig.Authorize],
// on what they return ([Validate] reports them missing).
func BuiltIns() Registry {
	return Registry{
		"apple":   func(c UserConfig) Provider { return Apple(c.ClientID, c.ClientSecret) },
		"auth0":   func(c UserConfig) Provider { return Auth0(c.ClientID, c.ClientSecret, c.Issuer) },
		"discord": func(c UserConfig) Provider { return Discord(c.ClientID, c.ClientSecret) },
		"github":  func(c UserConfig) Provider { return GitHub(c.ClientID, c.ClientSecret) },
		"gitlab":  func(c UserConfig) Provider { return GitLab(c.ClientID, c.ClientSecret) },
		"google":  func(c UserConfig) Provider { return Google(c.ClientID, c.ClientSecret) },
		"keycloak": func(c UserConfig) Provider {
			return Keycloak(c.ClientID, c.ClientSecret, c.Issuer)
		},
		"linkedin": func(c UserConfig) Provider { return LinkedIn(c.ClientID, c.ClientSecret) },
		"microsoft-entra-id": func(c UserConfig) Provider {
			return MicrosoftEntraID(c.ClientID, c.ClientSecret, c.Tenant)
		},
		"okta":        func(c UserConfig) Provider { return Okta(c.ClientID, c.ClientSecret, c.Issuer) },
		"slack":       func(c UserConfig) Provider { return Slack(c.ClientID, c.ClientSecret) },
		"twitch":      func(c UserConfig) Provider { return Twitch(c.ClientID, c.ClientSecret) },
		"email":       func(UserConfig) Provider { return Email("", nil) },
		"credentials": func(UserConfig) Provider { return Credentials(nil) },
		"passkey":     func(UserConfig) Provider { return Passkey() },

		// E-mail delivery services (email_services.go).
		"forwardemail": func(c UserConfig) Provider {
			e := c.EmailService
			return ForwardEmail(e.APIKey, e.From, e.options()...)
		},
		"mailgun": func(c UserConfig) Provider {
			e := c.EmailService
			return Mailgun(e.APIKey, e.Domain, e.Region, e.From, e.options()...)
		},
		"postmark": func(c UserConfig) Provider {
			e := c.EmailService
			return Postmark(e.APIKey, e.From, e.options()...)
		},
		"resend": func(c UserConfig) Provider {
			e := c.EmailService
			return Resend(e.APIKey, e.From, e.options()...)
		},
		"sendgrid": func(c UserConfig) Provider {
			e := c.EmailService
			return SendGrid(e.APIKey, e.From, e.options()...)
		},
	}
}

// New builds the provider registered under id. It returns an error
// matching [ErrUnknownProvider] when there is none.
func (r Registry) New(id string, c UserConfig) (Provider, error) {
	f := r[id]
	if f == nil {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownProvider, id, strings.Join(r.IDs(), ", "))
	}
	return f(c), nil
}

// IDs returns the registered identifiers, sorted.
func (r Registry) IDs() []string {
	ids := make([]string, 0, len(r))
	for id := range r {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// issuerURL turns a bare domain into an https URL; a URL is kept as given.
func issuerURL(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.Contains(s, "://") {
		return s
	}
	return "https://" + s
}

// params builds url.Values from key, value pairs.
func params(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}
