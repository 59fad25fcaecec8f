package core

import "slices"

// Reasons the checks give for a rejected field.
const (
	notEmpty  = "must not be empty"
	mustBeSet = "must be set"
)

// rule is one condition on a method's input: when broken, the field is
// rejected for the reason.
type rule struct {
	broken bool
	field  string
	reason string
}

// firstBroken returns an [*InputError] for the first of the rules that is
// broken, or nil.
func firstBroken(m Method, rules ...rule) error {
	for _, r := range rules {
		if r.broken {
			return invalid(string(m), r.field, r.reason)
		}
	}
	return nil
}

// Validate reports whether u can be created: its id is set and its
// username, when it has one, is normalised ([NormalizeUsername]). The
// e-mail address may be "": a user without one.
func (u *User) Validate() error {
	if err := firstBroken(MethodCreateUser, rule{u.ID == "", "id", notEmpty}); err != nil {
		return err
	}
	if err := checkUsername(MethodCreateUser, u.Username); err != nil {
		return err
	}
	return validateData(MethodCreateUser, u.Data, false)
}

// Validate reports whether a can be linked: its user, provider, provider
// account id and a valid type are set.
func (a *Account) Validate() error {
	return firstBroken(MethodLinkAccount,
		rule{a.UserID == "", "userId", notEmpty},
		rule{a.Provider == "", "provider", notEmpty},
		rule{a.ProviderAccountID == "", "providerAccountId", notEmpty},
		rule{!a.Type.Valid(), "type", "must be oauth, oidc, email, webauthn or credentials, not " + quote(string(a.Type))},
		rule{a.PasswordHash != nil && *a.PasswordHash == "", "passwordHash", "must not be empty (leave it nil)"})
}

// Validate reports whether s can be created: token, user and expiry are set.
func (s *Session) Validate() error {
	return firstBroken(MethodCreateSession,
		rule{s.SessionToken == "", "sessionToken", notEmpty},
		rule{s.UserID == "", "userId", notEmpty},
		rule{s.Expires.IsZero(), "expires", mustBeSet})
}

// Validate reports whether v can be created: identifier, token and expiry
// are set.
func (v *VerificationToken) Validate() error {
	return firstBroken(MethodCreateVerificationToken,
		rule{v.Identifier == "", "identifier", notEmpty},
		rule{v.Token == "", "token", notEmpty},
		rule{v.Expires.IsZero(), "expires", mustBeSet})
}

// Validate reports whether a can be created: its ids and public key are set
// and the counter is not negative.
func (a *Authenticator) Validate() error {
	return firstBroken(MethodCreateAuthenticator,
		rule{a.CredentialID == "", "credentialID", notEmpty},
		rule{a.CredentialPublicKey == "", "credentialPublicKey", notEmpty},
		rule{a.UserID == "", "userId", notEmpty},
		rule{a.ProviderAccountID == "", "providerAccountId", notEmpty},
		rule{a.Counter < 0, "counter", "must not be negative"})
}

// Clone returns a deep copy of u, sharing no memory with it.
func (u User) Clone() User {
	u.EmailVerified = clonePtr(u.EmailVerified)
	u.Name = clonePtr(u.Name)
	u.Image = clonePtr(u.Image)
	u.Data = cloneData(u.Data)
	return u
}

// Clone returns a deep copy of a, sharing no memory with it.
func (a Account) Clone() Account {
	a.AccessToken = clonePtr(a.AccessToken)
	a.ExpiresAt = clonePtr(a.ExpiresAt)
	a.ExpiresIn = clonePtr(a.ExpiresIn)
	a.IDToken = clonePtr(a.IDToken)
	a.RefreshToken = clonePtr(a.RefreshToken)
	a.Scope = clonePtr(a.Scope)
	a.TokenType = clonePtr(a.TokenType)
	a.SessionState = clonePtr(a.SessionState)
	a.PasswordHash = clonePtr(a.PasswordHash)
	if a.AuthorizationDetails != nil {
		ds := make([]AuthorizationDetail, len(a.AuthorizationDetails))
		for i, d := range a.AuthorizationDetails {
			ds[i] = d.Clone()
		}
		a.AuthorizationDetails = ds
	}
	return a
}

// Clone returns a deep copy of d, sharing no memory with it.
func (d AuthorizationDetail) Clone() AuthorizationDetail {
	d.Locations = slices.Clone(d.Locations)
	d.Actions = slices.Clone(d.Actions)
	d.Datatypes = slices.Clone(d.Datatypes)
	d.Privileges = slices.Clone(d.Privileges)
	return d
}

// Clone returns a deep copy of a, sharing no memory with it.
func (a Authenticator) Clone() Authenticator {
	a.Transports = clonePtr(a.Transports)
	return a
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func quote(s string) string { return `"` + s + `"` }
