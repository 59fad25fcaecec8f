package provider

import (
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"

	"github.com/authport/authport/core"
)

// Problem is one thing wrong with the provider configuration.
type Problem struct {
	// Index is the provider's position in the list given to [Validate], or
	// -1 for a problem with a [ValidateOption].
	Index int
	// ProviderID is the provider's id ("" when it has none).
	ProviderID string
	// Field is the Go name of the field at fault, e.g. "ClientID" or
	// "Authorization.URL".
	Field string
	// Message says what is wrong.
	Message string
}

// String returns the problem as one line: the provider (id and position),
// the field and the message.
func (p Problem) String() string {
	where := "configuration"
	if p.Index >= 0 {
		where = fmt.Sprintf("provider #%d", p.Index)
		if p.ProviderID != "" {
			where = fmt.Sprintf("provider %q (#%d)", p.ProviderID, p.Index)
		}
	}
	return fmt.Sprintf("%s: %s: %s", where, p.Field, p.Message)
}

// ValidationError lists every problem [Validate] found. Retrieve it with
// [errors.As]; it matches [core.ErrInvalidConfig].
type ValidationError struct {
	Problems []Problem
}

// Error lists every problem on one line.
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid provider configuration: %d problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	for i, p := range e.Problems {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Is reports whether target is [core.ErrInvalidConfig].
func (e *ValidationError) Is(target error) bool { return target == core.ErrInvalidConfig }

// ValidateOption is an option of [Validate].
type ValidateOption func(*validateOptions)

type validateOptions struct {
	redirectProxyURL string
}

// WithRedirectProxyURL gives the configuration-level redirect proxy URL
// (AuthConfig.redirectProxyUrl): every OAuth and OIDC provider without one
// of its own takes it, and gets the state check.
func WithRedirectProxyURL(u string) ValidateOption {
	return func(o *validateOptions) { o.redirectProxyURL = u }
}

// Validate checks the providers as the auth configuration is built, and
// returns copies of them with the defaults applied; the caller's values are
// not changed. When anything is wrong it returns nil and a
// [*ValidationError] listing every problem, each naming the provider and
// the field.
//
// Rules, for every provider:
//   - it is not nil (a nil provider has no valid type);
//   - ID is set, URL-safe (letters, digits and - . _ ~, not "." or "..")
//     and unique; Name is set.
//
// OAuth ([*OAuth2Config]) and OIDC ([*OIDCConfig]) providers:
//   - ClientID is set;
//   - OAuth: Authorization.URL or WellKnown; Token.URL, Token.Request or
//     WellKnown; Userinfo.URL, Userinfo.Request or WellKnown;
//   - OIDC: Issuer or WellKnown;
//   - every URL given is absolute http(s);
//   - Checks are none, state or pkce, plus nonce for OIDC; none is alone,
//     and not combined with a redirect proxy (which needs state);
//   - Client.TokenEndpointAuthMethod is a known method, DefaultMaxAge ≥ 0;
//     private_key_jwt has Client.PrivateKey, client_secret_jwt a
//     ClientSecret (unless Token.Request authenticates itself).
//
// E-mail: From is an address, SendVerificationRequest is set, MaxAge ≥ 0.
// Credentials: Authorize is set; field names are set and unique. WebAuthn:
// UserVerification is valid, RPOrigin is an absolute http(s) origin whose
// host is RPID or under it, RPID is a bare host name.
//
// Defaults applied to the copies:
//   - OAuth and OIDC Checks: [pkce] when empty; state added when the
//     provider or [WithRedirectProxyURL] sets a redirect proxy URL (the
//     provider then carries that URL); duplicates removed;
//   - OIDC IDToken: true when nil;
//   - e-mail MaxAge: [DefaultEmailMaxAge] when 0;
//   - WebAuthn UserVerification: preferred when empty.
func Validate(providers []Provider, opts ...ValidateOption) ([]Provider, error) {
	var o validateOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	v := &validator{index: -1}
	if o.redirectProxyURL != "" {
		v.url("RedirectProxyURL", o.redirectProxyURL)
	}
	out := make([]Provider, len(providers))
	seen := make(map[string]int)
	for i, p := range providers {
		v.index, v.id = i, ""
		if p == nil || p.isNil() {
			v.add("Type", "provider is nil, so it has no valid type (want oidc, oauth, email, credentials or webauthn)")
			continue
		}
		c := p.Common()
		v.id = c.ID
		if !c.Type.Valid() {
			v.add("Type", fmt.Sprintf("%q is not a provider type", c.Type))
		}
		switch {
		case c.ID == "":
			v.add("ID", "required")
		case !urlSafe(c.ID):
			v.add("ID", fmt.Sprintf("%q is not URL-safe (use letters, digits, '-', '.', '_' and '~')", c.ID))
		default:
			if first, dup := seen[c.ID]; dup {
				v.add("ID", fmt.Sprintf("duplicate: provider #%d has the same id", first))
			} else {
				seen[c.ID] = i
			}
		}
		if strings.TrimSpace(c.Name) == "" {
			v.add("Name", "required (it labels the sign-in button)")
		}
		q := p.clone()
		if ov, ok := q.(oauthValidatable); ok {
			ov.validateAndDefault(v, o)
		} else {
			validateOther(v, q)
		}
		out[i] = q
	}
	if len(v.problems) > 0 {
		return nil, &ValidationError{Problems: v.problems}
	}
	return out, nil
}

type validator struct {
	index    int
	id       string
	problems []Problem
}

func (v *validator) add(field, msg string) {
	v.problems = append(v.problems, Problem{Index: v.index, ProviderID: v.id, Field: field, Message: msg})
}

// url checks that s, when set, is an absolute http or https URL.
func (v *validator) url(field, s string) {
	if s == "" {
		return
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		v.add(field, fmt.Sprintf("%q is not an absolute http(s) URL", s))
	}
}

func urlSafe(id string) bool {
	if id == "." || id == ".." {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_', r == '~':
		default:
			return false
		}
	}
	return true
}

// oauthValidatable is implemented by *OAuth2Config[P] and *OIDCConfig[P]
// for every P.
type oauthValidatable interface {
	validateAndDefault(v *validator, o validateOptions)
}

func (c *OAuth2Config[P]) validateAndDefault(v *validator, o validateOptions) {
	validateOAuth(v, c, o)
}

func (c *OIDCConfig[P]) validateAndDefault(v *validator, o validateOptions) {
	validateOAuthFields(v, &c.OAuth2Config, TypeOIDC, o)
	if c.IDToken == nil {
		t := true
		c.IDToken = &t
	}
}

func validateOAuth[P any](v *validator, c *OAuth2Config[P], o validateOptions) {
	validateOAuthFields(v, c, TypeOAuth, o)
}

// validateOAuthFields checks c as a provider of type t and applies the
// defaults to c (a copy owned by Validate).
func validateOAuthFields[P any](v *validator, c *OAuth2Config[P], t Type, o validateOptions) {
	if c.ClientID == "" {
		msg := "required"
		if v.id != "" {
			// The usual cause: the variable FromEnv and SetEnvDefaults read
			// is unset.
			msg += "; set it, or " + EnvPrefix(v.id) + "_ID in the environment when the provider is configured from it"
		}
		v.add("ClientID", msg)
	}
	v.url("Authorization.URL", c.Authorization.URL)
	v.url("Token.URL", c.Token.URL)
	v.url("Userinfo.URL", c.Userinfo.URL)
	v.url("WellKnown", c.WellKnown)
	v.url("Issuer", c.Issuer)
	v.url("JWKSEndpoint", c.JWKSEndpoint)
	v.url("RedirectProxyURL", c.RedirectProxyURL)
	switch t {
	case TypeOAuth:
		if c.Authorization.URL == "" && c.WellKnown == "" {
			v.add("Authorization.URL", "an OAuth provider needs an authorization URL or WellKnown")
		}
		if c.Token.URL == "" && c.Token.Request == nil && c.WellKnown == "" {
			v.add("Token.URL", "an OAuth provider needs a token URL (or Token.Request) or WellKnown")
		}
		if c.Userinfo.URL == "" && c.Userinfo.Request == nil && c.WellKnown == "" {
			v.add("Userinfo.URL", "an OAuth provider needs a userinfo URL (or Userinfo.Request) or WellKnown to get the profile")
		}
	case TypeOIDC:
		if c.Issuer == "" && c.WellKnown == "" {
			v.add("Issuer", "an OIDC provider needs an issuer or WellKnown")
		}
	}
	switch m := c.Client.TokenEndpointAuthMethod; {
	case m == "":
	case !slices.Contains(TokenEndpointAuthMethods(), m):
		v.add("Client.TokenEndpointAuthMethod", fmt.Sprintf("%q is not one of %s", m, strings.Join(TokenEndpointAuthMethods(), ", ")))
	}
	if c.Token.Request == nil {
		switch c.Client.TokenEndpointAuthMethod {
		case "private_key_jwt":
			if c.Client.PrivateKey == nil {
				v.add("Client.PrivateKey", "private_key_jwt needs the key that signs the client assertion")
			}
		case "client_secret_jwt":
			if c.ClientSecret == "" {
				v.add("ClientSecret", "client_secret_jwt signs the client assertion with the client secret")
			}
		}
	}
	if c.Client.DefaultMaxAge < 0 {
		v.add("Client.DefaultMaxAge", "must not be negative")
	}

	// Checks: validate what was given, then default.
	var checks Checks
	for _, ch := range c.Checks {
		switch ch {
		case CheckNone, CheckState, CheckPKCE:
		case CheckNonce:
			if t != TypeOIDC {
				v.add("Checks", "nonce is for OIDC providers only")
				continue
			}
		default:
			v.add("Checks", fmt.Sprintf("%q is not a check (want none, state, pkce%s)", ch, map[bool]string{true: " or nonce"}[t == TypeOIDC]))
			continue
		}
		if !checks.Has(ch) {
			checks = append(checks, ch)
		}
	}
	if checks.Has(CheckNone) && len(checks) > 1 {
		v.add("Checks", "none cannot be combined with other checks")
	}
	if len(c.Checks) == 0 {
		checks = Checks{CheckPKCE}
	}
	if c.RedirectProxyURL == "" {
		c.RedirectProxyURL = o.redirectProxyURL
	}
	if c.RedirectProxyURL != "" {
		if checks.Has(CheckNone) {
			v.add("Checks", "none cannot be used with a redirect proxy URL, which needs the state check")
		} else if !checks.Has(CheckState) {
			checks = append(checks, CheckState)
		}
	}
	c.Checks = checks
}

func validateOther(v *validator, p Provider) {
	switch c := p.(type) {
	case *EmailConfig:
		if c.From == "" {
			v.add("From", "required (the sender of the sign-in e-mail)")
		} else if _, err := mail.ParseAddress(c.From); err != nil {
			v.add("From", fmt.Sprintf("%q is not an e-mail address", c.From))
		}
		if c.SendVerificationRequest == nil {
			v.add("SendVerificationRequest", "required (it sends the sign-in link)")
		}
		switch {
		case c.MaxAge < 0:
			v.add("MaxAge", "must not be negative")
		case c.MaxAge == 0:
			c.MaxAge = DefaultEmailMaxAge
		}
		validateCodes(v, &c.CodeMaxAge, &c.CodeAttempts)
	case *PasswordConfig:
		validatePassword(v, c)
	case *CredentialsConfig:
		if c.Authorize == nil {
			v.add("Authorize", "required (it checks the credentials)")
		}
		names := map[string]bool{}
		for i, f := range c.Fields {
			field := fmt.Sprintf("Fields[%d].Name", i)
			switch {
			case f.Name == "":
				v.add(field, "required")
			case names[f.Name]:
				v.add(field, fmt.Sprintf("duplicate field %q", f.Name))
			}
			names[f.Name] = true
		}
	case *WebAuthnConfig:
		switch {
		case c.UserVerification == "":
			c.UserVerification = UserVerificationPreferred
		case !c.UserVerification.Valid():
			v.add("UserVerification", fmt.Sprintf("%q is not required, preferred or discouraged", c.UserVerification))
		}
		rpIDok := true
		if c.RPID != "" {
			if strings.ContainsAny(c.RPID, ":/?#@ ") || strings.HasPrefix(c.RPID, ".") || strings.HasSuffix(c.RPID, ".") {
				v.add("RPID", fmt.Sprintf("%q is not a bare host name (no scheme, port or path)", c.RPID))
				rpIDok = false
			}
		}
		if c.RPOrigin != "" {
			u, err := url.Parse(c.RPOrigin)
			switch {
			case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
				v.add("RPOrigin", fmt.Sprintf("%q is not an absolute http(s) origin", c.RPOrigin))
			case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
				v.add("RPOrigin", fmt.Sprintf("%q is an origin with a path, query or fragment", c.RPOrigin))
			case c.RPID != "" && rpIDok:
				host := strings.ToLower(u.Hostname())
				id := strings.ToLower(c.RPID)
				if host != id && !strings.HasSuffix(host, "."+id) {
					v.add("RPOrigin", fmt.Sprintf("host %q is not RPID %q or a subdomain of it", host, c.RPID))
				}
			}
		}
	}
}
