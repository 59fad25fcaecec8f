package core

import "slices"

// Validate reports whether u can be created: its id and e-mail are set.
func (u *User) Validate() error {
	switch {
	case u.ID == "":
		return invalid("createUser", "id", "must not be empty")
	case u.Email == "":
		return invalid("createUser", "email", "must not be empty")
	}
	return validateData(MethodCreateUser, u.Data, false)
}

// Validate reports whether a can be linked: its user, provider, provider
// account id and a valid type are set.
func (a *Account) Validate() error {
	switch {
	case a.UserID == "":
		return invalid("linkAccount", "userId", "must not be empty")
	case a.Provider == "":
		return invalid("linkAccount", "provider", "must not be empty")
	case a.ProviderAccountID == "":
		return invalid("linkAccount", "providerAccountId", "must not be empty")
	case !a.Type.Valid():
		return invalid("linkAccount", "type", "must be oauth, oidc, email or webauthn, not "+quote(string(a.Type)))
	}
	return nil
}

// Validate reports whether s can be created: token, user and expiry are set.
func (s *Session) Validate() error {
	switch {
	case s.SessionToken == "":
		return invalid("createSession", "sessionToken", "must not be empty")
	case s.UserID == "":
		return invalid("createSession", "userId", "must not be empty")
	case s.Expires.IsZero():
		return invalid("createSession", "expires", "must be set")
	}
	return nil
}

// Validate reports whether v can be created: identifier, token and expiry
// are set.
func (v *VerificationToken) Validate() error {
	switch {
	case v.Identifier == "":
		return invalid("createVerificationToken", "identifier", "must not be empty")
	case v.Token == "":
		return invalid("createVerificationToken", "token", "must not be empty")
	case v.Expires.IsZero():
		return invalid("createVerificationToken", "expires", "must be set")
	}
	return nil
}

// Validate reports whether a can be created: its ids and public key are set
// and the counter is not negative.
func (a *Authenticator) Validate() error {
	switch {
	case a.CredentialID == "":
		return invalid("createAuthenticator", "credentialID", "must not be empty")
	case a.CredentialPublicKey == "":
		return invalid("createAuthenticator", "credentialPublicKey", "must not be empty")
	case a.UserID == "":
		return invalid("createAuthenticator", "userId", "must not be empty")
	case a.ProviderAccountID == "":
		return invalid("createAuthenticator", "providerAccountId", "must not be empty")
	case a.Counter < 0:
		return invalid("createAuthenticator", "counter", "must not be negative")
	}
	return nil
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
