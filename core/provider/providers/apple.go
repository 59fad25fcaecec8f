package providers

import (
	"context"
	"strings"

	"github.com/authport/authport/core/provider"
)

// BoolString is a boolean that a provider may send as a JSON boolean or as
// the string "true" or "false" (Apple does both).
type BoolString bool

// UnmarshalJSON accepts true, false, "true" and "false"; anything else is
// false.
func (b *BoolString) UnmarshalJSON(data []byte) error {
	s := strings.Trim(strings.TrimSpace(string(data)), `"`)
	*b = BoolString(strings.EqualFold(s, "true"))
	return nil
}

// AppleUserData is the user object Apple posts to the callback, as the form
// parameter "user", on the first sign-in only. The sign-in code copies it
// into [AppleProfile.User].
type AppleUserData struct {
	Name struct {
		FirstName string `json:"firstName"`
		LastName  string `json:"lastName"`
	} `json:"name"`
	Email string `json:"email"`
}

// AppleProfile is the claims of an Apple ID token, plus the user object of
// the first sign-in.
type AppleProfile struct {
	Iss            string     `json:"iss"`
	Aud            string     `json:"aud"`
	Iat            int64      `json:"iat"`
	Exp            int64      `json:"exp"`
	Sub            string     `json:"sub"`
	Nonce          string     `json:"nonce,omitempty"`
	NonceSupported bool       `json:"nonce_supported,omitempty"`
	Email          string     `json:"email"`
	EmailVerified  BoolString `json:"email_verified"`
	IsPrivateEmail BoolString `json:"is_private_email"`
	RealUserStatus int        `json:"real_user_status,omitempty"`
	TransferSub    string     `json:"transfer_sub,omitempty"`
	AuthTime       int64      `json:"auth_time,omitempty"`
	// User is the user object of the first sign-in, or nil.
	User *AppleUserData `json:"user,omitempty"`
}

// AppleUser is the Apple profile mapping: sub, email, and the name
// from the first sign-in's user object; Apple has no picture.
func AppleUser(_ context.Context, p AppleProfile, _ provider.TokenSet) (provider.User, error) {
	u := provider.User{ID: p.Sub, Email: p.Email}
	if p.User != nil {
		name := strings.TrimSpace(p.User.Name.FirstName + " " + p.User.Name.LastName)
		u.Name = str(name)
		if u.Email == "" {
			u.Email = p.User.Email
		}
	}
	return u, nil
}

// Apple returns the Sign in with Apple OpenID Connect provider (id
// "apple", issuer https://appleid.apple.com), asking for name and email
// with response_mode form_post, and authenticating with
// client_secret_post. clientSecret is the JWT Apple requires, signed with
// the team's key; it expires (at most six months) and must be renewed.
func Apple(clientID, clientSecret string) *provider.OIDCConfig[AppleProfile] {
	c := oidcBuiltIn("apple", "Apple", "#000000", "post", clientID, clientSecret, AppleUser, "https://appleid.apple.com")
	c.Authorization = provider.Endpoint{Params: params("scope", "name email", "response_mode", "form_post")}
	return c
}
