package providers

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// UserConfig is what a user supplies to a built-in provider through a
// [Registry] (the spec's OAuthUserConfig, reduced to what the built-ins
// need).
type UserConfig struct {
	// ClientID and ClientSecret are the client credentials the provider
	// issued.
	ClientID, ClientSecret string
	// Issuer is the issuer or base URL, for providers that have one per
	// deployment: Keycloak (…/realms/{realm}), Okta, Auth0 (a domain such
	// as "example.eu.auth0.com" is accepted too), and the others the
	// table in the package README marks with Issuer (Cognito, ZITADEL,
	// Mastodon, Nextcloud, …). Battle.net and Salesforce use it to pick a
	// region or My Domain and default when it is empty.
	Issuer string
	// Tenant is the Microsoft Entra ID tenant: a tenant id, a domain, or
	// "common", "organizations" or "consumers" (empty means "common"). It
	// is also FusionAuth's tenantId, Azure AD B2C's user flow (policy) and
	// WorkOS's connection id.
	Tenant string
	// EmailService is what the e-mail delivery services ("forwardemail",
	// "mailgun", "postmark", "resend", "sendgrid") need.
	EmailService EmailServiceConfig
}

// Factory builds a built-in provider from what the user supplies. It
// returns a fresh value on every call.
type Factory func(c UserConfig) provider.Provider

// Registry maps built-in provider identifiers to their factories (SPEC
// §2.1 BuiltInProviders). It is an ordinary map: add your own factories to
// it, or delete the ones you do not want.
type Registry map[string]Factory

// errUnknownProvider is returned, wrapped, by [Registry.New] for an
// identifier the registry does not hold.
var errUnknownProvider = fmt.Errorf("unknown built-in provider: %w", core.ErrNotFound)

// BuiltIns returns a new [Registry] of every built-in provider: the
// OAuth and OpenID Connect identity providers under Auth.js's identifiers
// ("apple", "github", "google", … — core/provider/providers/README.md lists them
// all with their checks, scopes and arguments); the e-mail delivery
// services "forwardemail", "mailgun", "postmark", "resend" and "sendgrid"
// (configured by [UserConfig.EmailService]); and the defaults "email",
// "credentials" and "passkey".
//
// The e-mail and credentials defaults need a callback that a [UserConfig]
// cannot carry: set [provider.EmailConfig.From] and
// [provider.EmailConfig.SendVerificationRequest], or
// [provider.CredentialsConfig.Authorize], on what they return
// ([provider.Validate] reports them missing).
func BuiltIns() Registry {
	r := Registry{
		"email":       func(UserConfig) provider.Provider { return provider.Email("", nil) },
		"credentials": func(UserConfig) provider.Provider { return provider.Credentials(nil) },
		"passkey":     func(UserConfig) provider.Provider { return provider.Passkey() },
	}
	// One line a letter; the identifier of each is the one its
	// constructor gives.
	r.add(
		client(FortyTwoSchool),
		client(Apple), issuer(Asgardeo), client(Atlassian), issuer(Auth0), issuer(Authentik), issuerTenant(AzureADB2C),
		issuer(BattleNet), issuer(BeyondIdentity), client(Bitbucket), client(Box), issuer(BoxyHQSAML),
		client(ClickUp), issuer(Cognito), client(Coinbase), client(Concept2),
		issuer(Descope), client(Discord), client(Dribbble), client(Dropbox), issuer(DuendeIdentityServer6),
		client(Eventbrite), client(EVEOnline),
		client(Facebook), client(FACEIT), client(Figma), client(Foursquare), client(Freshbooks), issuer(Frontegg), issuerTenant(FusionAuth),
		client(GitHub), client(GitLab), client(Google),
		client(HubSpot), client(Huggingface),
		issuer(IdentityServer4), client(Instagram),
		client(Kakao), issuer(Keycloak), issuer(Kinde),
		client(LinkedIn), issuer(Logto),
		client(Mailchimp), client(Mailru), issuer(Mastodon), issuer(Mattermost), tenant(MicrosoftEntraID),
		client(Naver), client(Netlify), issuer(Nextcloud), client(Notion),
		issuer(Okta), issuer(OneLogin), issuer(OryHydra), issuer(Osso), client(Osu),
		issuer(Passage), client(Patreon), issuer(PingID), client(Pinterest), client(Pipedrive),
		client(Reddit), client(Roblox),
		issuer(Salesforce), client(SimpleLogin), client(Slack), client(Spotify), client(Strava),
		client(Threads), client(Trakt), client(Twitch), client(Twitter),
		issuer(UnitedEffects),
		client(Vipps), client(VK),
		client(Webex), client(Wikimedia), client(WordPress), tenant(WorkOS),
		client(Yandex),
		issuer(Zitadel), client(Zoho), client(Zoom),
		service(ForwardEmail), mailgunService, service(Postmark), service(Resend), service(SendGrid),
	)
	return r
}

// add registers each factory under the identifier of what it builds.
func (r Registry) add(fs ...Factory) {
	for _, f := range fs {
		r[f(UserConfig{}).Common().ID] = f
	}
}

// client adapts a constructor of (clientID, clientSecret).
func client[T provider.Provider](f func(id, secret string) T) Factory {
	return func(c UserConfig) provider.Provider { return f(c.ClientID, c.ClientSecret) }
}

// issuer adapts a constructor of (clientID, clientSecret, issuer).
func issuer[T provider.Provider](f func(id, secret, issuer string) T) Factory {
	return func(c UserConfig) provider.Provider { return f(c.ClientID, c.ClientSecret, c.Issuer) }
}

// tenant adapts a constructor of (clientID, clientSecret, tenant).
func tenant[T provider.Provider](f func(id, secret, tenant string) T) Factory {
	return func(c UserConfig) provider.Provider { return f(c.ClientID, c.ClientSecret, c.Tenant) }
}

// issuerTenant adapts a constructor of (clientID, clientSecret, issuer,
// tenant).
func issuerTenant[T provider.Provider](f func(id, secret, issuer, tenant string) T) Factory {
	return func(c UserConfig) provider.Provider { return f(c.ClientID, c.ClientSecret, c.Issuer, c.Tenant) }
}

// service adapts an e-mail service constructor of (apiKey, from).
func service(f func(apiKey, from string, opts ...EmailServiceOption) *provider.EmailConfig) Factory {
	return func(c UserConfig) provider.Provider {
		e := c.EmailService
		return f(e.APIKey, e.From, e.options()...)
	}
}

// mailgunService is Mailgun's factory, which also reads the domain and
// region.
func mailgunService(c UserConfig) provider.Provider {
	e := c.EmailService
	return Mailgun(e.APIKey, e.Domain, e.Region, e.From, e.options()...)
}

// New builds the provider registered under id. It returns an error
// matching [core.ErrNotFound] when there is none.
func (r Registry) New(id string, c UserConfig) (provider.Provider, error) {
	f := r[id]
	if f == nil {
		return nil, fmt.Errorf("%w %q (known: %s)", errUnknownProvider, id, strings.Join(r.IDs(), ", "))
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
