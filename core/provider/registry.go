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
type Factory func(c UserConfig) Provider

// Registry maps built-in provider identifiers to their factories (SPEC
// §2.1 BuiltInProviders). It is an ordinary map: add your own factories to
// it, or delete the ones you do not want.
type Registry map[string]Factory

// ErrUnknownProvider is returned, wrapped, by [Registry.New] for an
// identifier the registry does not hold.
var ErrUnknownProvider = errors.New("unknown built-in provider")

// BuiltIns returns a new [Registry] of every built-in provider: the
// OAuth and OpenID Connect identity providers under Auth.js's identifiers
// ("apple", "github", "google", … — core/provider/README.md lists them
// all with their checks, scopes and arguments); the e-mail delivery
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
		"okta":   func(c UserConfig) Provider { return Okta(c.ClientID, c.ClientSecret, c.Issuer) },
		"slack":  func(c UserConfig) Provider { return Slack(c.ClientID, c.ClientSecret) },
		"twitch": func(c UserConfig) Provider { return Twitch(c.ClientID, c.ClientSecret) },

		// Identity providers added with issue 17, alphabetised.
		"42-school": func(c UserConfig) Provider { return FortyTwoSchool(c.ClientID, c.ClientSecret) },
		"asgardeo":  func(c UserConfig) Provider { return Asgardeo(c.ClientID, c.ClientSecret, c.Issuer) },
		"atlassian": func(c UserConfig) Provider { return Atlassian(c.ClientID, c.ClientSecret) },
		"authentik": func(c UserConfig) Provider { return Authentik(c.ClientID, c.ClientSecret, c.Issuer) },
		"azure-ad-b2c": func(c UserConfig) Provider {
			return AzureADB2C(c.ClientID, c.ClientSecret, c.Issuer, c.Tenant)
		},
		"battlenet":               func(c UserConfig) Provider { return BattleNet(c.ClientID, c.ClientSecret, c.Issuer) },
		"beyondidentity":          func(c UserConfig) Provider { return BeyondIdentity(c.ClientID, c.ClientSecret, c.Issuer) },
		"bitbucket":               func(c UserConfig) Provider { return Bitbucket(c.ClientID, c.ClientSecret) },
		"box":                     func(c UserConfig) Provider { return Box(c.ClientID, c.ClientSecret) },
		"boxyhq-saml":             func(c UserConfig) Provider { return BoxyHQSAML(c.ClientID, c.ClientSecret, c.Issuer) },
		"click-up":                func(c UserConfig) Provider { return ClickUp(c.ClientID, c.ClientSecret) },
		"cognito":                 func(c UserConfig) Provider { return Cognito(c.ClientID, c.ClientSecret, c.Issuer) },
		"coinbase":                func(c UserConfig) Provider { return Coinbase(c.ClientID, c.ClientSecret) },
		"concept2":                func(c UserConfig) Provider { return Concept2(c.ClientID, c.ClientSecret) },
		"descope":                 func(c UserConfig) Provider { return Descope(c.ClientID, c.ClientSecret, c.Issuer) },
		"dribbble":                func(c UserConfig) Provider { return Dribbble(c.ClientID, c.ClientSecret) },
		"dropbox":                 func(c UserConfig) Provider { return Dropbox(c.ClientID, c.ClientSecret) },
		"duende-identity-server6": func(c UserConfig) Provider { return DuendeIdentityServer6(c.ClientID, c.ClientSecret, c.Issuer) },
		"eventbrite":              func(c UserConfig) Provider { return Eventbrite(c.ClientID, c.ClientSecret) },
		"eveonline":               func(c UserConfig) Provider { return EVEOnline(c.ClientID, c.ClientSecret) },
		"facebook":                func(c UserConfig) Provider { return Facebook(c.ClientID, c.ClientSecret) },
		"faceit":                  func(c UserConfig) Provider { return FACEIT(c.ClientID, c.ClientSecret) },
		"figma":                   func(c UserConfig) Provider { return Figma(c.ClientID, c.ClientSecret) },
		"foursquare":              func(c UserConfig) Provider { return Foursquare(c.ClientID, c.ClientSecret) },
		"freshbooks":              func(c UserConfig) Provider { return Freshbooks(c.ClientID, c.ClientSecret) },
		"frontegg":                func(c UserConfig) Provider { return Frontegg(c.ClientID, c.ClientSecret, c.Issuer) },
		"fusionauth": func(c UserConfig) Provider {
			return FusionAuth(c.ClientID, c.ClientSecret, c.Issuer, c.Tenant)
		},
		"hubspot":          func(c UserConfig) Provider { return HubSpot(c.ClientID, c.ClientSecret) },
		"huggingface":      func(c UserConfig) Provider { return Huggingface(c.ClientID, c.ClientSecret) },
		"identity-server4": func(c UserConfig) Provider { return IdentityServer4(c.ClientID, c.ClientSecret, c.Issuer) },
		"instagram":        func(c UserConfig) Provider { return Instagram(c.ClientID, c.ClientSecret) },
		"kakao":            func(c UserConfig) Provider { return Kakao(c.ClientID, c.ClientSecret) },
		"kinde":            func(c UserConfig) Provider { return Kinde(c.ClientID, c.ClientSecret, c.Issuer) },
		"logto":            func(c UserConfig) Provider { return Logto(c.ClientID, c.ClientSecret, c.Issuer) },
		"mailchimp":        func(c UserConfig) Provider { return Mailchimp(c.ClientID, c.ClientSecret) },
		"mailru":           func(c UserConfig) Provider { return Mailru(c.ClientID, c.ClientSecret) },
		"mastodon":         func(c UserConfig) Provider { return Mastodon(c.ClientID, c.ClientSecret, c.Issuer) },
		"mattermost":       func(c UserConfig) Provider { return Mattermost(c.ClientID, c.ClientSecret, c.Issuer) },
		"naver":            func(c UserConfig) Provider { return Naver(c.ClientID, c.ClientSecret) },
		"netlify":          func(c UserConfig) Provider { return Netlify(c.ClientID, c.ClientSecret) },
		"nextcloud":        func(c UserConfig) Provider { return Nextcloud(c.ClientID, c.ClientSecret, c.Issuer) },
		"notion":           func(c UserConfig) Provider { return Notion(c.ClientID, c.ClientSecret) },
		"onelogin":         func(c UserConfig) Provider { return OneLogin(c.ClientID, c.ClientSecret, c.Issuer) },
		"ory-hydra":        func(c UserConfig) Provider { return OryHydra(c.ClientID, c.ClientSecret, c.Issuer) },
		"osso":             func(c UserConfig) Provider { return Osso(c.ClientID, c.ClientSecret, c.Issuer) },
		"osu":              func(c UserConfig) Provider { return Osu(c.ClientID, c.ClientSecret) },
		"passage":          func(c UserConfig) Provider { return Passage(c.ClientID, c.ClientSecret, c.Issuer) },
		"patreon":          func(c UserConfig) Provider { return Patreon(c.ClientID, c.ClientSecret) },
		"ping-id":          func(c UserConfig) Provider { return PingID(c.ClientID, c.ClientSecret, c.Issuer) },
		"pinterest":        func(c UserConfig) Provider { return Pinterest(c.ClientID, c.ClientSecret) },
		"pipedrive":        func(c UserConfig) Provider { return Pipedrive(c.ClientID, c.ClientSecret) },
		"reddit":           func(c UserConfig) Provider { return Reddit(c.ClientID, c.ClientSecret) },
		"roblox":           func(c UserConfig) Provider { return Roblox(c.ClientID, c.ClientSecret) },
		"salesforce":       func(c UserConfig) Provider { return Salesforce(c.ClientID, c.ClientSecret, c.Issuer) },
		"simplelogin":      func(c UserConfig) Provider { return SimpleLogin(c.ClientID, c.ClientSecret) },
		"spotify":          func(c UserConfig) Provider { return Spotify(c.ClientID, c.ClientSecret) },
		"strava":           func(c UserConfig) Provider { return Strava(c.ClientID, c.ClientSecret) },
		"threads":          func(c UserConfig) Provider { return Threads(c.ClientID, c.ClientSecret) },
		"trakt":            func(c UserConfig) Provider { return Trakt(c.ClientID, c.ClientSecret) },
		"twitter":          func(c UserConfig) Provider { return Twitter(c.ClientID, c.ClientSecret) },
		"united-effects":   func(c UserConfig) Provider { return UnitedEffects(c.ClientID, c.ClientSecret, c.Issuer) },
		"vipps":            func(c UserConfig) Provider { return Vipps(c.ClientID, c.ClientSecret) },
		"vk":               func(c UserConfig) Provider { return VK(c.ClientID, c.ClientSecret) },
		"webex":            func(c UserConfig) Provider { return Webex(c.ClientID, c.ClientSecret) },
		"wikimedia":        func(c UserConfig) Provider { return Wikimedia(c.ClientID, c.ClientSecret) },
		"wordpress":        func(c UserConfig) Provider { return WordPress(c.ClientID, c.ClientSecret) },
		"workos":           func(c UserConfig) Provider { return WorkOS(c.ClientID, c.ClientSecret, c.Tenant) },
		"yandex":           func(c UserConfig) Provider { return Yandex(c.ClientID, c.ClientSecret) },
		"zitadel":          func(c UserConfig) Provider { return Zitadel(c.ClientID, c.ClientSecret, c.Issuer) },
		"zoho":             func(c UserConfig) Provider { return Zoho(c.ClientID, c.ClientSecret) },
		"zoom":             func(c UserConfig) Provider { return Zoom(c.ClientID, c.ClientSecret) },

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
