package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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

// GitHub returns the GitHub OAuth 2.0 provider (id "github"), asking for
// read:user and user:email. When the profile has no public e-mail address
// its userinfo handler reads /user/emails and takes the primary verified
// address, else the first verified one.
func GitHub(clientID, clientSecret string) *OAuth2Config[GitHubProfile] {
	return &OAuth2Config[GitHubProfile]{
		ID:   "github",
		Name: "GitHub",
		Authorization: Endpoint{
			URL:    "https://github.com/login/oauth/authorize",
			Params: params("scope", "read:user user:email"),
		},
		Token: TokenEndpoint{URL: "https://github.com/login/oauth/access_token"},
		Userinfo: UserinfoEndpoint[GitHubProfile]{
			URL:     "https://api.github.com/user",
			Request: githubUserinfo,
		},
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Profile:      GitHubUser,
		Style:        ButtonStyle{Logo: "/github.svg", BrandColor: "#24292f"},
	}
}

// GitHubUser is the GitHub profile mapping: id as a decimal string, name
// (else login), email, avatar_url.
func GitHubUser(_ context.Context, p GitHubProfile, _ TokenSet) (User, error) {
	u := User{Image: str(p.AvatarURL)}
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

func githubUserinfo(ctx context.Context, req UserinfoRequest) (GitHubProfile, error) {
	var p GitHubProfile
	if err := getJSON(ctx, req.client(), req.Endpoint.WithParams(), req.Tokens.AccessToken, &p); err != nil {
		return p, err
	}
	if p.Email != nil && *p.Email != "" {
		return p, nil
	}
	var emails []GitHubEmail
	emailsURL := strings.TrimSuffix(req.Endpoint.URL, "/") + "/emails"
	if err := getJSON(ctx, req.client(), emailsURL, req.Tokens.AccessToken, &emails); err != nil {
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

// maxProfileBytes bounds the body read from a profile endpoint.
const maxProfileBytes = 1 << 20

func getJSON(ctx context.Context, c *http.Client, rawURL, accessToken string, dst any) error {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	r.Header.Set("Accept", "application/json")
	r.Header.Set("User-Agent", "authport")
	if accessToken != "" {
		r.Header.Set("Authorization", "Bearer "+accessToken)
	}
	res, err := c.Do(r)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxProfileBytes))
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("GET %s: %s", rawURL, res.Status)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("GET %s: %w", rawURL, err)
	}
	return nil
}

// GitLabProfile is the GitLab user (GET /api/v4/user) the GitLab provider
// reads.
type GitLabProfile struct {
	ID               int64  `json:"id"`
	Username         string `json:"username"`
	Name             string `json:"name"`
	Email            string `json:"email"`
	PublicEmail      string `json:"public_email"`
	State            string `json:"state"`
	AvatarURL        string `json:"avatar_url"`
	WebURL           string `json:"web_url"`
	Bot              bool   `json:"bot"`
	TwoFactorEnabled bool   `json:"two_factor_enabled"`
	CreatedAt        string `json:"created_at"`
	ConfirmedAt      string `json:"confirmed_at"`
}

// GitLab returns the GitLab.com OAuth 2.0 provider (id "gitlab"), asking
// for read_user. For a self-managed GitLab, change the three endpoint URLs.
func GitLab(clientID, clientSecret string) *OAuth2Config[GitLabProfile] {
	return &OAuth2Config[GitLabProfile]{
		ID:   "gitlab",
		Name: "GitLab",
		Authorization: Endpoint{
			URL:    "https://gitlab.com/oauth/authorize",
			Params: params("scope", "read_user"),
		},
		Token:        TokenEndpoint{URL: "https://gitlab.com/oauth/token"},
		Userinfo:     UserinfoEndpoint[GitLabProfile]{URL: "https://gitlab.com/api/v4/user"},
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Profile:      GitLabUser,
		Style:        ButtonStyle{Logo: "/gitlab.svg", BrandColor: "#FC6D26"},
	}
}

// GitLabUser is the GitLab profile mapping: id as a decimal string, name
// (else username), email, avatar_url.
func GitLabUser(_ context.Context, p GitLabProfile, _ TokenSet) (User, error) {
	u := User{Email: p.Email, Name: str(p.Name), Image: str(p.AvatarURL)}
	if p.ID != 0 {
		u.ID = strconv.FormatInt(p.ID, 10)
	}
	if u.Name == nil {
		u.Name = str(p.Username)
	}
	return u, nil
}

// DiscordProfile is the Discord user (GET /users/@me) the Discord provider
// reads.
type DiscordProfile struct {
	ID            string  `json:"id"`
	Username      string  `json:"username"`
	Discriminator string  `json:"discriminator"`
	GlobalName    *string `json:"global_name"`
	Avatar        *string `json:"avatar"`
	Bot           bool    `json:"bot,omitempty"`
	System        bool    `json:"system,omitempty"`
	MFAEnabled    bool    `json:"mfa_enabled"`
	Banner        *string `json:"banner"`
	AccentColor   *int64  `json:"accent_color"`
	Locale        string  `json:"locale"`
	Verified      bool    `json:"verified"`
	Email         *string `json:"email"`
	Flags         int64   `json:"flags"`
	PremiumType   int64   `json:"premium_type"`
	PublicFlags   int64   `json:"public_flags"`
}

// Discord returns the Discord OAuth 2.0 provider (id "discord"), asking
// for identify and email.
func Discord(clientID, clientSecret string) *OAuth2Config[DiscordProfile] {
	return &OAuth2Config[DiscordProfile]{
		ID:   "discord",
		Name: "Discord",
		Authorization: Endpoint{
			URL:    "https://discord.com/api/oauth2/authorize",
			Params: params("scope", "identify email"),
		},
		Token:        TokenEndpoint{URL: "https://discord.com/api/oauth2/token"},
		Userinfo:     UserinfoEndpoint[DiscordProfile]{URL: "https://discord.com/api/users/@me"},
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Profile:      DiscordUser,
		Style:        ButtonStyle{Logo: "/discord.svg", BrandColor: "#5865F2"},
	}
}

// DiscordUser is the Discord profile mapping: id, global_name (else
// username), email, and the avatar URL built from the id and avatar hash
// (animated hashes, prefixed a_, give a GIF), or Discord's default avatar
// when there is no hash.
func DiscordUser(_ context.Context, p DiscordProfile, _ TokenSet) (User, error) {
	u := User{ID: p.ID, Name: str(p.Username), Image: str(DiscordAvatarURL(p))}
	if p.GlobalName != nil && *p.GlobalName != "" {
		u.Name = str(*p.GlobalName)
	}
	if p.Email != nil {
		u.Email = *p.Email
	}
	return u, nil
}

// DiscordAvatarURL returns the URL of p's avatar on Discord's CDN. Without
// an avatar hash it is one of the default avatars: for the new usernames
// (discriminator "0") the index is (id >> 22) mod 6, for legacy ones the
// discriminator mod 5.
func DiscordAvatarURL(p DiscordProfile) string {
	if p.Avatar == nil || *p.Avatar == "" {
		var n uint64
		if p.Discriminator == "" || p.Discriminator == "0" {
			if id, err := strconv.ParseUint(p.ID, 10, 64); err == nil {
				n = (id >> 22) % 6
			}
		} else if d, err := strconv.ParseUint(p.Discriminator, 10, 64); err == nil {
			n = d % 5
		}
		return fmt.Sprintf("https://cdn.discordapp.com/embed/avatars/%d.png", n)
	}
	format := "png"
	if strings.HasPrefix(*p.Avatar, "a_") {
		format = "gif"
	}
	return "https://cdn.discordapp.com/avatars/" + url.PathEscape(p.ID) + "/" + url.PathEscape(*p.Avatar) + "." + format
}
