// Package providers holds authport's built-in providers, one file a
// provider named after its Auth.js identifier (as Auth.js's providers
// directory): the OAuth 2.0 and OpenID Connect identity providers, and
// the e-mail delivery services.
//
// # Identity providers
//
// Constructors return ready [provider.OAuth2Config] or
// [provider.OIDCConfig] values with real endpoints, a typed profile, its
// exported mapping and a button style; the caller supplies the client id
// and secret, and a tenant, domain or issuer where the provider needs
// one. Change any field of what they return before handing it to
// auth.New. [BuiltIns] returns a fresh [Registry] of them by identifier
// (with the defaults [provider.Email], [provider.Credentials] and
// [provider.Passkey]), for configuration read from files; [FromEnv] builds
// them from Auth.js's AUTH_<ID>_ID, AUTH_<ID>_SECRET and AUTH_<ID>_ISSUER
// variables. Each constructor's own doc, and the package README's table,
// give its checks, scopes and arguments.
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
// # E-mail services
//
// [Resend], [SendGrid], [Postmark], [Mailgun] and [ForwardEmail] return
// e-mail providers whose SendVerificationRequest sends the link
// ([provider.VerificationEmail]) through that service's HTTP API; failures
// match [provider.ErrEmailDelivery]. SMTP delivery is in the module
// github.com/authport/authport/mail.
package providers
