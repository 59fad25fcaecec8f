package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// ZohoProfile is the Zoho Accounts user (GET /oauth/user/info).
type ZohoProfile struct {
	ZUID        FlexString `json:"ZUID"`
	FirstName   string     `json:"First_Name"`
	LastName    string     `json:"Last_Name"`
	DisplayName string     `json:"Display_Name"`
	Email       string     `json:"Email"`
}

// ZohoUser maps a Zoho user: ZUID, Email, Display_Name (else first and
// last name); no picture.
func ZohoUser(_ context.Context, p ZohoProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: string(p.ZUID), Email: p.Email, Name: str(first(p.DisplayName, joinNonEmpty(p.FirstName, p.LastName)))}, nil
}

// Zoho returns the Zoho Accounts OAuth 2.0 provider (id "zoho", the US
// data center), asking for AaaServer.profile.Read, with the state check,
// authenticating with client_secret_post. Zoho's APIs take the token as
// "Authorization: Zoho-oauthtoken {token}".
func Zoho(clientID, clientSecret string) *provider.OAuth2Config[ZohoProfile] {
	c := oauthBuiltIn("zoho", "Zoho", "#e42527", "state post", clientID, clientSecret, ZohoUser,
		"https://accounts.zoho.com/oauth/v2/auth", "AaaServer.profile.Read", "https://accounts.zoho.com/oauth/v2/token", "https://accounts.zoho.com/oauth/user/info")
	c.Userinfo.Request = userinfoWithScheme[ZohoProfile]("Zoho-oauthtoken")
	return c
}
