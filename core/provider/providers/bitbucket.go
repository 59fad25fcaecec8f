package providers

import (
	"context"
	"strings"

	"github.com/authport/authport/core/provider"
)

// BitbucketProfile is the Bitbucket Cloud user (GET /2.0/user), plus the
// primary confirmed address from /2.0/user/emails.
type BitbucketProfile struct {
	UUID        string `json:"uuid"`
	AccountID   string `json:"account_id"`
	Username    string `json:"username"`
	Nickname    string `json:"nickname"`
	DisplayName string `json:"display_name"`
	Links       struct {
		Avatar struct {
			Href string `json:"href"`
		} `json:"avatar"`
	} `json:"links"`
	// Email is filled from /2.0/user/emails, which the user object lacks.
	Email string `json:"email,omitempty"`
}

func bitbucketUserinfo(ctx context.Context, req provider.UserinfoRequest) (BitbucketProfile, error) {
	var p BitbucketProfile
	bearer := authHeader("Bearer", req.Tokens.AccessToken)
	if err := fetchJSON(ctx, clientOf(req), userinfoCall{url: req.Endpoint.WithParams(), header: bearer}, &p); err != nil {
		return p, err
	}
	var emails struct {
		Values []struct {
			Email       string `json:"email"`
			IsPrimary   bool   `json:"is_primary"`
			IsConfirmed bool   `json:"is_confirmed"`
		} `json:"values"`
	}
	u := strings.TrimSuffix(req.Endpoint.URL, "/") + "/emails"
	if err := fetchJSON(ctx, clientOf(req), userinfoCall{url: u, header: bearer}, &emails); err != nil {
		if ctx.Err() != nil {
			return p, ctx.Err()
		}
		return p, nil // without the email scope: no address
	}
	for _, e := range emails.Values {
		if e.IsConfirmed && (e.IsPrimary || p.Email == "") {
			p.Email = e.Email
			if e.IsPrimary {
				break
			}
		}
	}
	return p, nil
}

// BitbucketUser maps a Bitbucket profile: account_id (else uuid), the
// confirmed e-mail address, display_name (else username), the avatar
// link.
func BitbucketUser(_ context.Context, p BitbucketProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: first(p.AccountID, p.UUID), Email: p.Email, Name: str(first(p.DisplayName, p.Username, p.Nickname)),
		Image: str(p.Links.Avatar.Href)}, nil
}

// Bitbucket returns the Bitbucket Cloud OAuth 2.0 provider (id
// "bitbucket"), asking for account and email. Its userinfo handler reads
// /2.0/user, then /2.0/user/emails for the primary confirmed address.
func Bitbucket(clientID, clientSecret string) *provider.OAuth2Config[BitbucketProfile] {
	c := oauthBuiltIn("bitbucket", "Bitbucket", "#205081", "pkce state", clientID, clientSecret, BitbucketUser,
		"https://bitbucket.org/site/oauth2/authorize", "account email", "https://bitbucket.org/site/oauth2/access_token", "https://api.bitbucket.org/2.0/user")
	c.Userinfo.Request = bitbucketUserinfo
	return c
}
