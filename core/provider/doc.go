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
// The defaults [Email], [Credentials] and [Passkey] are here; the 83
// built-in identity providers (GitHub, Google, Keycloak, …), the e-mail
// delivery services and the registry of all of them by Auth.js
// identifier are in the package
// github.com/authport/authport/core/provider/providers, one file a
// provider. [SetEnvDefaults] fills a provider built in code from Auth.js's
// AUTH_<ID>_ID, AUTH_<ID>_SECRET and AUTH_<ID>_ISSUER variables.
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
// # E-mail
//
// [VerificationEmail] is the default sign-in e-mail ([EmailMessage]);
// delivery failures match [ErrEmailDelivery]. The delivery services are in
// the providers package; SMTP delivery is in the module
// github.com/authport/authport/mail.
package provider
