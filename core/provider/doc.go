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
// one: [GitHub], [Google], [GitLab], [MicrosoftEntraID], [Apple],
// [Discord], [Auth0], [Keycloak], [Okta], [Slack], [Twitch], [LinkedIn],
// and the defaults [Email], [Credentials] and [Passkey]. [BuiltIns]
// returns a fresh [Registry] of them by identifier, for configuration read
// from files or the environment.
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
