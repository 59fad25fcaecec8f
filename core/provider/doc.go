// Package provider is the provider configuration of authport (SPEC
// §2.1–2.7, §5): the objects that say how a user signs in, and the checks
// run on them when the auth configuration is built.
//
// # Providers
//
// A [Provider] is one way to sign in:
//
//   - [*OAuth2Config] (type oauth) and [*OIDCConfig] (type oidc), generic
//     over the provider's profile type P so the Profile callback is typed;
//     use map[string]any for an untyped profile;
//   - [*EmailConfig] (type email): a single-use link sent by e-mail;
//   - [*CredentialsConfig] (type credentials): an Authorize callback;
//   - [*WebAuthnConfig] (type webauthn): passkeys.
//
// Every OAuth and OIDC config, whatever its P, is an [OAuthProvider]: the
// non-generic view the sign-in code uses ([OAuthProvider.Options],
// [OAuthProvider.ProfileFromJSON], [OAuthProvider.AccountTokens],
// [OAuthProvider.CheckCallbackTokens]).
//
// # Built-in providers
//
// Constructors return ready configurations with real endpoints, a typed
// profile, its mapping and a button style; the caller supplies the client
// id and secret, and a tenant, domain or issuer where the provider needs
// one, and the defaults [Email], [Credentials] and [Passkey]. [BuiltIns]
// returns a fresh [Registry] of them by identifier, for configuration read
// from files; [FromEnv] builds them from Auth.js's AUTH_<ID>_ID,
// AUTH_<ID>_SECRET and AUTH_<ID>_ISSUER variables, and [SetEnvDefaults]
// fills a provider built in code from them. Each constructor's own doc,
// and the package README's table, give its checks, scopes and arguments.
//
// The 83 identity providers, with their Auth.js identifiers where the
// name differs: [FortyTwoSchool] (42-school), [Apple], [Asgardeo],
// [Atlassian], [Auth0], [Authentik], [AzureADB2C] (azure-ad-b2c),
// [BattleNet], [BeyondIdentity], [Bitbucket], [Box], [BoxyHQSAML]
// (boxyhq-saml), [ClickUp] (click-up), [Cognito], [Coinbase], [Concept2],
// [Descope], [Discord], [Dribbble], [Dropbox], [DuendeIdentityServer6]
// (duende-identity-server6), [Eventbrite], [EVEOnline], [Facebook],
// [FACEIT], [Figma], [Foursquare], [Freshbooks], [Frontegg],
// [FusionAuth], [GitHub], [GitLab], [Google], [HubSpot], [Huggingface],
// [IdentityServer4] (identity-server4), [Instagram], [Kakao], [Keycloak],
// [Kinde], [LinkedIn], [Logto], [Mailchimp], [Mailru], [Mastodon],
// [Mattermost], [MicrosoftEntraID] (microsoft-entra-id), [Naver],
// [Netlify], [Nextcloud], [Notion], [Okta], [OneLogin], [OryHydra]
// (ory-hydra), [Osso], [Osu], [Passage], [Patreon], [PingID] (ping-id),
// [Pinterest], [Pipedrive], [Reddit], [Roblox], [Salesforce],
// [SimpleLogin], [Slack], [Spotify], [Strava], [Threads], [Trakt],
// [Twitch], [Twitter], [UnitedEffects] (united-effects), [Vipps], [VK],
// [Webex], [Wikimedia], [WordPress], [WorkOS], [Yandex], [Zitadel],
// [Zoho], [Zoom].
//
// # Validation and defaults
//
// [Validate] checks a list of providers and reports every problem at once
// in a [*ValidationError] (each [Problem] names the provider and the
// field). It returns copies with the defaults applied: checks [pkce] when
// none are given, state added when a redirect proxy URL is set, OIDC
// IDToken true, e-mail links valid 24 hours.
//
// # Tokens and accounts
//
// [TokenSet] is a token endpoint's response. [DefaultAccount] keeps the
// tokens an account stores; [TokenSet.Account] turns them into a
// [github.com/authport/authport/core.Account].
//
// # E-mail services
//
// [Resend], [SendGrid], [Postmark], [Mailgun] and [ForwardEmail] return
// e-mail providers whose SendVerificationRequest sends the link
// ([VerificationEmail]) through that service's HTTP API; failures match
// [ErrEmailDelivery]. SMTP delivery is in the module
// github.com/authport/authport/mail.
package provider
