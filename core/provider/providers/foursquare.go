package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// FoursquareProfile is the Foursquare user response (GET /v2/users/self).
type FoursquareProfile struct {
	Response struct {
		User struct {
			ID        string `json:"id"`
			FirstName string `json:"firstName"`
			LastName  string `json:"lastName"`
			Contact   struct {
				Email string `json:"email"`
			} `json:"contact"`
			Photo struct {
				Prefix string `json:"prefix"`
				Suffix string `json:"suffix"`
			} `json:"photo"`
		} `json:"user"`
	} `json:"response"`
}

// FoursquareUser maps a Foursquare profile: id, contact.email, first and
// last name, the original-size photo (prefix + "original" + suffix).
func FoursquareUser(_ context.Context, p FoursquareProfile, _ provider.TokenSet) (provider.User, error) {
	u := p.Response.User
	out := provider.User{ID: u.ID, Email: u.Contact.Email, Name: str(joinNonEmpty(u.FirstName, u.LastName))}
	if u.Photo.Prefix != "" {
		out.Image = str(u.Photo.Prefix + "original" + u.Photo.Suffix)
	}
	return out, nil
}

// Foursquare returns the Foursquare OAuth 2.0 provider (id "foursquare")
// with the state check. Foursquare's v2 API takes the token as the
// oauth_token query parameter and a version date as v.
func Foursquare(clientID, clientSecret string) *provider.OAuth2Config[FoursquareProfile] {
	c := oauthBuiltIn("foursquare", "Foursquare", "#f94877", "state post", clientID, clientSecret, FoursquareUser,
		"https://foursquare.com/oauth2/authenticate", "", "https://foursquare.com/oauth2/access_token", "https://api.foursquare.com/v2/users/self")
	c.Userinfo.Params = params("v", "20230131")
	c.Userinfo.Request = userinfoTokenInQuery[FoursquareProfile]("oauth_token")
	return c
}
