package provider

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/authport/authport/core/internal/emailnorm"
)

// Provider is one way to sign in (SPEC §2.1 Provider): an
// [*OAuth2Config], an [*OIDCConfig] (of any profile type), an
// [*EmailConfig], a [*CredentialsConfig] or a [*WebAuthnConfig]. The set is
// closed: only this package's types implement Provider.
//
// Use a type switch, or [OAuthProvider] for OAuth and OIDC providers
// whatever their profile type, to reach a provider's settings.
type Provider interface {
	// Common returns the provider's id, name and type.
	Common() CommonOptions

	isNil() bool
	clone() Provider
}

var errNotAbsolute = errors.New("not an absolute URL")

// DefaultEmailMaxAge is how long an e-mail sign-in link is valid when
// [EmailConfig.MaxAge] is zero.
const DefaultEmailMaxAge = 24 * time.Hour

// ErrInvalidEmail is returned, wrapped, for an e-mail address that cannot
// be used as an identifier.
var ErrInvalidEmail = errors.New("invalid e-mail address")

// VerificationRequest is what [EmailConfig.SendVerificationRequest]
// receives: everything needed to send the sign-in link.
type VerificationRequest struct {
	// Identifier is the normalised e-mail address to send the link to.
	Identifier string
	// URL is the sign-in link; it carries the token.
	URL string
	// Token is the token in the link, unhashed (the store keeps only its
	// hash).
	Token string
	// Expires is when the link stops working.
	Expires time.Time
	// From is the sender, [EmailConfig.From].
	From string
	// ProviderID is the e-mail (or password) provider's id.
	ProviderID string
	// Purpose says which e-mail this is: an e-mail sign-in (the zero
	// value), a password sign-up's verification, a password reset, or the
	// notice that someone signed up with an address that has an account.
	Purpose Purpose
	// Code is the 6-digit one-time code to show beside the link, or ""
	// (codes are off, or the purpose takes none). It works only in the
	// browser that asked for the e-mail.
	Code string
}

// EmailConfig configures passwordless sign-in by e-mail (SPEC §2.1 email
// provider, §5.6): the user receives a link holding a single-use token.
type EmailConfig struct {
	// ID identifies the provider; "email" by default ([Email]).
	ID string
	// Name is shown on the default sign-in page.
	Name string
	// From is the sender address, e.g. "Example <no-reply@example.com>".
	// Required.
	From string
	// MaxAge is how long a sign-in link is valid; 0 means
	// [DefaultEmailMaxAge] (24 hours).
	MaxAge time.Duration
	// SendVerificationRequest sends the sign-in link. Required.
	SendVerificationRequest func(ctx context.Context, req VerificationRequest) error
	// NormalizeIdentifier turns what the user typed into the identifier
	// the token is bound to, or rejects it. nil means [NormalizeEmail].
	NormalizeIdentifier func(identifier string) (string, error)
	// GenerateVerificationToken returns a fresh token for a link. nil lets
	// the library generate a random one.
	GenerateVerificationToken func() (string, error)
	// Codes puts a 6-digit one-time code beside the link when the sign-in
	// is asked for with a browser binding (the handler's code route): a
	// code typed in the browser that asked for it is immune to mail
	// scanners that open links.
	Codes bool
	// CodeMaxAge is how long a code works; 0 means [DefaultCodeMaxAge].
	CodeMaxAge time.Duration
	// CodeAttempts is how many codes may be tried for one address within
	// CodeMaxAge; 0 means [DefaultCodeAttempts].
	CodeAttempts int
}

// Email returns the default e-mail provider: id "email", name "Email",
// links valid 24 hours, addresses normalised by [NormalizeEmail].
func Email(from string, send func(ctx context.Context, req VerificationRequest) error) *EmailConfig {
	return &EmailConfig{ID: "email", Name: "Email", From: from, MaxAge: DefaultEmailMaxAge, SendVerificationRequest: send}
}

// Common returns the provider's id, name and type ([TypeEmail]).
func (c *EmailConfig) Common() CommonOptions {
	if c == nil {
		return CommonOptions{Type: TypeEmail}
	}
	return CommonOptions{ID: c.ID, Name: c.Name, Type: TypeEmail}
}

// TokenMaxAge returns MaxAge, or [DefaultEmailMaxAge] when it is zero.
func (c *EmailConfig) TokenMaxAge() time.Duration {
	if c == nil || c.MaxAge == 0 {
		return DefaultEmailMaxAge
	}
	return c.MaxAge
}

// Normalize returns identifier as the token is bound to it, using
// NormalizeIdentifier or, when nil, [NormalizeEmail].
func (c *EmailConfig) Normalize(identifier string) (string, error) {
	if c != nil && c.NormalizeIdentifier != nil {
		return c.NormalizeIdentifier(identifier)
	}
	return NormalizeEmail(identifier)
}

func (c *EmailConfig) isNil() bool { return c == nil }

func (c *EmailConfig) clone() Provider { return shallowClone(c) }

// NormalizeEmail is authport's one normalisation of e-mail addresses, the
// e-mail provider's default and the same function as auth.NormalizeEmail,
// which core/auth applies to every address that enters (e-mail link,
// OAuth/OIDC profile, passkey, credentials). It trims surrounding white
// space, puts the address in Unicode NFC, lowercases the local part (as
// Auth.js does), and maps the domain to its lowercase ASCII (IDNA, punycode)
// form. It rejects, with an error matching [ErrInvalidEmail], an address
// that does not have exactly one '@' with text on both sides, that holds
// white space, control characters, a comma or invalid UTF-8, whose domain
// is not a valid (internationalised) domain name, or that is longer than
// 254 bytes (64 before the '@') once normalised.
func NormalizeEmail(s string) (string, error) {
	out, err := emailnorm.Normalize(s)
	if err != nil {
		var e *emailnorm.Error
		if errors.As(err, &e) {
			return "", &emailError{why: e.Why}
		}
		return "", &emailError{why: err.Error()}
	}
	return out, nil
}

type emailError struct{ why string }

// Error says what is wrong with the address.
func (e *emailError) Error() string {
	return "e-mail address " + e.why + ": " + ErrInvalidEmail.Error()
}

// Is reports whether target is [ErrInvalidEmail].
func (e *emailError) Is(target error) bool { return target == ErrInvalidEmail }

// CredentialField describes one input of a credentials sign-in form.
type CredentialField struct {
	// Name is the form field's name and the key in the credentials map.
	Name string
	// Label is shown beside the input.
	Label string
	// Type is the HTML input type, e.g. "text" or "password".
	Type string
	// Placeholder is the input's placeholder text.
	Placeholder string
}

// AuthorizeRequest is what [CredentialsConfig.Authorize] receives.
type AuthorizeRequest struct {
	// Credentials are the submitted form values, by field name.
	Credentials map[string]string
	// Request is the HTTP request that submitted them, when there is one.
	Request *http.Request
}

// CredentialsConfig configures sign-in with arbitrary credentials, such as
// a username and password checked by the application (SPEC §2.1
// credentials provider). It creates no account.
type CredentialsConfig struct {
	// ID identifies the provider; "credentials" by default ([Credentials]).
	ID string
	// Name is shown on the default sign-in page.
	Name string
	// Fields are the inputs of the default sign-in form.
	Fields []CredentialField
	// Authorize checks the submitted credentials. It returns the user (its
	// ID is the account id) when they are valid, nil and no error when
	// they are not, and an error when it could not decide. Required.
	Authorize func(ctx context.Context, req AuthorizeRequest) (*User, error)
}

// Credentials returns the default credentials provider: id "credentials",
// name "Credentials", with the given authorize callback and no fields.
func Credentials(authorize func(ctx context.Context, req AuthorizeRequest) (*User, error)) *CredentialsConfig {
	return &CredentialsConfig{ID: "credentials", Name: "Credentials", Authorize: authorize}
}

// Common returns the provider's id, name and type ([TypeCredentials]).
func (c *CredentialsConfig) Common() CommonOptions {
	if c == nil {
		return CommonOptions{Type: TypeCredentials}
	}
	return CommonOptions{ID: c.ID, Name: c.Name, Type: TypeCredentials}
}

func (c *CredentialsConfig) isNil() bool { return c == nil }

func (c *CredentialsConfig) clone() Provider {
	if c == nil {
		return c
	}
	out := *c
	out.Fields = slices.Clone(c.Fields)
	return &out
}

// UserVerification is the WebAuthn user-verification requirement.
type UserVerification string

// The user-verification requirements of WebAuthn.
const (
	UserVerificationRequired    UserVerification = "required"
	UserVerificationPreferred   UserVerification = "preferred"
	UserVerificationDiscouraged UserVerification = "discouraged"
)

// Valid reports whether v is one of the three requirements.
func (v UserVerification) Valid() bool {
	switch v {
	case UserVerificationRequired, UserVerificationPreferred, UserVerificationDiscouraged:
		return true
	}
	return false
}

// WebAuthnConfig configures sign-in with passkeys and other WebAuthn
// authenticators (SPEC §2.1 WebAuthn provider).
type WebAuthnConfig struct {
	// ID identifies the provider; "passkey" by default ([Passkey]).
	ID string
	// Name is shown on the default sign-in page.
	Name string
	// RPID is the relying party id: the domain the credentials are scoped
	// to, e.g. "example.com". Empty means the host of the request.
	RPID string
	// RPName is the relying party's name shown by authenticators. Empty
	// means the application's name or RPID.
	RPName string
	// RPOrigin is the origin the browser reports, e.g.
	// "https://example.com". Empty means the origin of the request. Its host
	// must be RPID or a subdomain of it.
	RPOrigin string
	// UserVerification is the user-verification requirement; empty means
	// [UserVerificationPreferred].
	UserVerification UserVerification
	// EnableConditionalUI offers passkeys in the browser's autofill.
	EnableConditionalUI bool
}

// Passkey returns the default WebAuthn provider: id "passkey", name
// "Passkey", user verification preferred, relying party taken from the
// request.
func Passkey() *WebAuthnConfig {
	return &WebAuthnConfig{ID: "passkey", Name: "Passkey", UserVerification: UserVerificationPreferred}
}

// Common returns the provider's id, name and type ([TypeWebAuthn]).
func (c *WebAuthnConfig) Common() CommonOptions {
	if c == nil {
		return CommonOptions{Type: TypeWebAuthn}
	}
	return CommonOptions{ID: c.ID, Name: c.Name, Type: TypeWebAuthn}
}

func (c *WebAuthnConfig) isNil() bool { return c == nil }

func (c *WebAuthnConfig) clone() Provider { return shallowClone(c) }

// shallowClone returns a copy of *c, or c itself when it is nil, for the
// provider types whose fields hold nothing mutable.
func shallowClone[T any, PT interface {
	*T
	Provider
}](c PT) Provider {
	if c == nil {
		return c
	}
	out := *c
	return PT(&out)
}
