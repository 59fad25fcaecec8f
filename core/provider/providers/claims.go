package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/authport/authport/core/provider"
)

// StandardClaims are the OpenID Connect standard claims (OIDC Core 5.1)
// that most OIDC built-ins map to a [provider.User]. Provider profile types embed
// it and add their own claims.
type StandardClaims struct {
	Sub               string `json:"sub"`
	Name              string `json:"name,omitempty"`
	GivenName         string `json:"given_name,omitempty"`
	FamilyName        string `json:"family_name,omitempty"`
	MiddleName        string `json:"middle_name,omitempty"`
	Nickname          string `json:"nickname,omitempty"`
	PreferredUsername string `json:"preferred_username,omitempty"`
	Email             string `json:"email,omitempty"`
	EmailVerified     bool   `json:"email_verified,omitempty"`
	Picture           string `json:"picture,omitempty"`
	Locale            string `json:"locale,omitempty"`
	Zoneinfo          string `json:"zoneinfo,omitempty"`
	UpdatedAt         any    `json:"updated_at,omitempty"`
}

// Standard returns the standard claims; profile types that embed
// [StandardClaims] get it, and with it [StandardClaimsUser] as their
// profile mapping.
func (c StandardClaims) Standard() StandardClaims { return c }

// StandardClaimer is a profile type that carries the standard claims.
type StandardClaimer interface{ Standard() StandardClaims }

// StandardClaimsUser is the profile mapping of the OIDC built-ins that
// use the standard claims: sub; email; name, else given and family name
// joined, else nickname, else preferred_username; picture.
func StandardClaimsUser[P StandardClaimer](_ context.Context, p P, _ provider.TokenSet) (provider.User, error) {
	c := p.Standard()
	return c.user(c.name()), nil
}

// name is the name [StandardClaimsUser] maps: name, else given, middle
// and family name joined, else nickname, else preferred_username.
func (c StandardClaims) name() string {
	return first(c.Name, joinNonEmpty(c.GivenName, c.MiddleName, c.FamilyName), c.Nickname, c.PreferredUsername)
}

// user maps the claims to a [provider.User]: sub, email, picture, and the
// first of names that is not empty as the name. The profile mappings of
// the built-ins that embed StandardClaims name their choice of name with
// it.
func (c StandardClaims) user(names ...string) provider.User {
	return provider.User{ID: c.Sub, Email: c.Email, Name: str(first(names...)), Image: str(c.Picture)}
}

// FlexString is a JSON string or number, kept as a string: some providers
// send ids as numbers in one API version and strings in another.
type FlexString string

// UnmarshalJSON accepts a string, a number (kept with every digit) or null.
func (f *FlexString) UnmarshalJSON(data []byte) error {
	s := strings.TrimSpace(string(data))
	switch {
	case s == "null":
		*f = ""
	case strings.HasPrefix(s, `"`):
		var v string
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		*f = FlexString(v)
	default:
		var n json.Number
		if err := json.Unmarshal(data, &n); err != nil {
			return fmt.Errorf("want a string or a number: %w", err)
		}
		*f = FlexString(n.String())
	}
	return nil
}
