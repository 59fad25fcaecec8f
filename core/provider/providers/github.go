package providers

import (
	"context"
	"strconv"
	"strings"

	"github.com/authport/authport/core/provider"
)

// GitHubProfile is the GitHub user (GET /user) the GitHub provider reads.
type GitHubProfile struct {
	Login           string  `json:"login"`
	ID              int64   `json:"id"`
	NodeID          string  `json:"node_id"`
	AvatarURL       string  `json:"avatar_url"`
	HTMLURL         string  `json:"html_url"`
	Type            string  `json:"type"`
	SiteAdmin       bool    `json:"site_admin"`
	Name            *string `json:"name"`
	Company         *string `json:"company"`
	Blog            *string `json:"blog"`
	Location        *string `json:"location"`
	Email           *string `json:"email"`
	Bio             *string `json:"bio"`
	TwitterUsername *string `json:"twitter_username,omitempty"`
	CreatedAt       string  `json:"created_at"`
	UpdatedAt       string  `json:"updated_at"`
}

// GitHubEmail is one entry of GitHub's GET /user/emails.
type GitHubEmail struct {
	Email      string  `json:"email"`
	Primary    bool    `json:"primary"`
	Verified   bool    `json:"verified"`
	Visibility *string `json:"visibility"`
}

// GitHubUser is the GitHub profile mapping: id as a decimal string, name
// (else login), email, avatar_url.
func GitHubUser(_ context.Context, p GitHubProfile, _ provider.TokenSet) (provider.User, error) {
	u := provider.User{Image: str(p.AvatarURL)}
	if p.ID != 0 {
		u.ID = strconv.FormatInt(p.ID, 10)
	}
	if p.Name != nil && *p.Name != "" {
		u.Name = str(*p.Name)
	} else {
		u.Name = str(p.Login)
	}
	if p.Email != nil {
		u.Email = *p.Email
	}
	return u, nil
}

func githubUserinfo(ctx context.Context, req provider.UserinfoRequest) (GitHubProfile, error) {
	var p GitHubProfile
	if err := getJSON(ctx, clientOf(req), req.Endpoint.WithParams(), req.Tokens.AccessToken, &p); err != nil {
		return p, err
	}
	if p.Email != nil && *p.Email != "" {
		return p, nil
	}
	var emails []GitHubEmail
	emailsURL := strings.TrimSuffix(req.Endpoint.URL, "/") + "/emails"
	if err := getJSON(ctx, clientOf(req), emailsURL, req.Tokens.AccessToken, &emails); err != nil {
		if ctx.Err() != nil {
			return p, ctx.Err()
		}
		return p, nil // no user:email scope, or the call failed: keep no e-mail
	}
	var pick *GitHubEmail
	for i := range emails {
		e := &emails[i]
		if !e.Verified || e.Email == "" {
			continue
		}
		if e.Primary {
			pick = e
			break
		}
		if pick == nil {
			pick = e
		}
	}
	if pick != nil {
		p.Email = str(pick.Email)
	}
	return p, nil
}

// GitHub returns the GitHub OAuth 2.0 provider (id "github"), asking for
// read:user and user:email. When the profile has no public e-mail address
// its userinfo handler reads /user/emails and takes the primary verified
// address, else the first verified one.
func GitHub(clientID, clientSecret string) *provider.OAuth2Config[GitHubProfile] {
	c := oauthBuiltIn("github", "GitHub", "#24292f", "", clientID, clientSecret, GitHubUser,
		"https://github.com/login/oauth/authorize", "read:user user:email", "https://github.com/login/oauth/access_token", "https://api.github.com/user")
	c.Userinfo.Request = githubUserinfo
	return c
}
