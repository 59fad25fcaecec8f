package provider

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// MailchimpProfile is the Mailchimp OAuth metadata (GET
// login.mailchimp.com/oauth2/metadata).
type MailchimpProfile struct {
	DC          string `json:"dc"`
	Role        string `json:"role"`
	AccountName string `json:"accountname"`
	UserID      int64  `json:"user_id"`
	Login       struct {
		Email      string `json:"email"`
		Avatar     string `json:"avatar"`
		LoginID    int64  `json:"login_id"`
		LoginName  string `json:"login_name"`
		LoginEmail string `json:"login_email"`
	} `json:"login"`
	APIEndpoint string `json:"api_endpoint"`
}

// Mailchimp returns the Mailchimp OAuth 2.0 provider (id "mailchimp")
// with the state check, authenticating with client_secret_post. Its
// metadata endpoint takes the token as "Authorization: OAuth {token}".
func Mailchimp(clientID, clientSecret string) *OAuth2Config[MailchimpProfile] {
	c := oauthBuiltIn("mailchimp", "Mailchimp", "https://login.mailchimp.com/oauth2/authorize", "",
		"https://login.mailchimp.com/oauth2/token", "https://login.mailchimp.com/oauth2/metadata", clientID, clientSecret, MailchimpUser, "#ffe01b")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (MailchimpProfile, error) {
		var p MailchimpProfile
		err := fetchJSON(ctx, req.client(), userinfoCall{url: req.Endpoint.WithParams(), header: authHeader("OAuth", req.Tokens.AccessToken)}, &p)
		return p, err
	}
	return c
}

// MailchimpUser maps Mailchimp metadata: login.login_id, login.email
// (else login_email), accountname (else login_name), login.avatar.
func MailchimpUser(_ context.Context, p MailchimpProfile, _ TokenSet) (User, error) {
	l := p.Login
	return User{ID: itoa(l.LoginID), Email: first(l.Email, l.LoginEmail), Name: str(first(p.AccountName, l.LoginName)), Image: str(l.Avatar)}, nil
}

// MailruProfile is the Mail.ru userinfo response.
type MailruProfile struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Name      string `json:"name"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Nickname  string `json:"nickname"`
	Image     string `json:"image"`
	Locale    string `json:"locale"`
}

// Mailru returns the Mail.ru OAuth 2.0 provider (id "mailru"), asking for
// userinfo, with the state check, authenticating with
// client_secret_post. Its userinfo endpoint takes the token as the
// access_token query parameter.
func Mailru(clientID, clientSecret string) *OAuth2Config[MailruProfile] {
	c := oauthBuiltIn("mailru", "Mail.ru", "https://oauth.mail.ru/login", "userinfo",
		"https://oauth.mail.ru/token", "https://oauth.mail.ru/userinfo", clientID, clientSecret, MailruUser, "#005ff9")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (MailruProfile, error) {
		var p MailruProfile
		err := fetchJSON(ctx, req.client(), userinfoCall{url: withQuery(req.Endpoint.WithParams(), "access_token", req.Tokens.AccessToken)}, &p)
		return p, err
	}
	return c
}

// MailruUser maps a Mail.ru profile: id, email, name (else first and last
// name, else nickname), image.
func MailruUser(_ context.Context, p MailruProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Email, Name: str(first(p.Name, joinNonEmpty(p.FirstName, p.LastName), p.Nickname)), Image: str(p.Image)}, nil
}

// MastodonProfile is the Mastodon account (GET
// /api/v1/accounts/verify_credentials).
type MastodonProfile struct {
	ID           string `json:"id"`
	Username     string `json:"username"`
	Acct         string `json:"acct"`
	DisplayName  string `json:"display_name"`
	URL          string `json:"url"`
	Avatar       string `json:"avatar"`
	AvatarStatic string `json:"avatar_static"`
	Bot          bool   `json:"bot"`
}

// Mastodon returns the Mastodon OAuth 2.0 provider (id "mastodon") for the
// server at issuer (e.g. https://mastodon.social), asking for
// read:accounts, with the pkce and state checks. Mastodon gives no e-mail
// address.
func Mastodon(clientID, clientSecret, issuer string) *OAuth2Config[MastodonProfile] {
	base := baseURL(issuer)
	c := oauthBuiltIn("mastodon", "Mastodon", base+"/oauth/authorize", "read:accounts",
		base+"/oauth/token", base+"/api/v1/accounts/verify_credentials", clientID, clientSecret, MastodonUser, "#6364FF")
	clearIfNoBase(c, base)
	c.Checks = Checks{CheckPKCE, CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// clearIfNoBase empties the endpoint URLs of a per-deployment provider
// built without its base URL, so that [Validate] reports them missing.
func clearIfNoBase[P any](c *OAuth2Config[P], base string) {
	if base == "" {
		c.Authorization.URL, c.Token.URL, c.Userinfo.URL = "", "", ""
	}
}

// MastodonUser maps a Mastodon account: id, display_name (else username),
// avatar_static.
func MastodonUser(_ context.Context, p MastodonProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Name: str(first(p.DisplayName, p.Username)), Image: str(first(p.AvatarStatic, p.Avatar))}, nil
}

// MattermostProfile is the Mattermost user (GET /api/v4/users/me).
type MattermostProfile struct {
	ID        string `json:"id"`
	Username  string `json:"username"`
	Email     string `json:"email"`
	Nickname  string `json:"nickname"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Locale    string `json:"locale"`
}

// Mattermost returns the Mattermost OAuth 2.0 provider (id "mattermost")
// for the server at issuer, with the state check, authenticating with
// client_secret_post.
func Mattermost(clientID, clientSecret, issuer string) *OAuth2Config[MattermostProfile] {
	base := baseURL(issuer)
	c := oauthBuiltIn("mattermost", "Mattermost", base+"/oauth/authorize", "",
		base+"/oauth/access_token", base+"/api/v4/users/me", clientID, clientSecret, MattermostUser, "#1e325c")
	clearIfNoBase(c, base)
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// MattermostUser maps a Mattermost user: id, email, first and last name
// (else nickname, else username); the avatar needs authentication, so no
// picture.
func MattermostUser(_ context.Context, p MattermostProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Email, Name: str(first(joinNonEmpty(p.FirstName, p.LastName), p.Nickname, p.Username))}, nil
}

// NaverProfile is the Naver member profile (GET /v1/nid/me).
type NaverProfile struct {
	ResultCode string `json:"resultcode"`
	Message    string `json:"message"`
	Response   struct {
		ID           string `json:"id"`
		Nickname     string `json:"nickname"`
		Name         string `json:"name"`
		Email        string `json:"email"`
		Gender       string `json:"gender"`
		Age          string `json:"age"`
		Birthday     string `json:"birthday"`
		ProfileImage string `json:"profile_image"`
		Mobile       string `json:"mobile"`
	} `json:"response"`
}

// Naver returns the Naver Login OAuth 2.0 provider (id "naver") with the
// state check Naver requires, authenticating with client_secret_post.
func Naver(clientID, clientSecret string) *OAuth2Config[NaverProfile] {
	c := oauthBuiltIn("naver", "Naver", "https://nid.naver.com/oauth2.0/authorize", "",
		"https://nid.naver.com/oauth2.0/token", "https://openapi.naver.com/v1/nid/me", clientID, clientSecret, NaverUser, "#03C75A")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// NaverUser maps a Naver profile: response.id, email, nickname (else
// name), profile_image.
func NaverUser(_ context.Context, p NaverProfile, _ TokenSet) (User, error) {
	r := p.Response
	return User{ID: r.ID, Email: r.Email, Name: str(first(r.Nickname, r.Name)), Image: str(r.ProfileImage)}, nil
}

// NetlifyProfile is the Netlify user (GET /api/v1/user).
type NetlifyProfile struct {
	ID        string `json:"id"`
	UID       string `json:"uid"`
	FullName  string `json:"full_name"`
	AvatarURL string `json:"avatar_url"`
	Email     string `json:"email"`
	Slug      string `json:"slug"`
}

// Netlify returns the Netlify OAuth 2.0 provider (id "netlify") with the
// state check.
func Netlify(clientID, clientSecret string) *OAuth2Config[NetlifyProfile] {
	c := oauthBuiltIn("netlify", "Netlify", "https://app.netlify.com/authorize", "",
		"https://api.netlify.com/oauth/token", "https://api.netlify.com/api/v1/user", clientID, clientSecret, NetlifyUser, "#32e6e2")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// NetlifyUser maps a Netlify user: id, email, full_name (else slug),
// avatar_url.
func NetlifyUser(_ context.Context, p NetlifyProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Email, Name: str(first(p.FullName, p.Slug)), Image: str(p.AvatarURL)}, nil
}

// NextcloudProfile is the Nextcloud user (OCS GET /ocs/v1.php/cloud/users/{id}),
// the data member of the OCS envelope.
type NextcloudProfile struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	DisplayName string `json:"displayname"`
	Enabled     bool   `json:"enabled"`
	Language    string `json:"language"`
	// AvatarURL is set by the provider: the server's avatar URL for id.
	AvatarURL string `json:"avatar_url,omitempty"`
}

// Nextcloud returns the Nextcloud OAuth 2.0 provider (id "nextcloud") for
// the server at issuer, with the state check, authenticating with
// client_secret_post. Its userinfo handler reads the OCS user API for the
// user_id of the token response, with the OCS-APIRequest header.
func Nextcloud(clientID, clientSecret, issuer string) *OAuth2Config[NextcloudProfile] {
	base := baseURL(issuer)
	c := oauthBuiltIn("nextcloud", "Nextcloud", base+"/apps/oauth2/authorize", "",
		base+"/apps/oauth2/api/v1/token", base+"/ocs/v1.php/cloud/users", clientID, clientSecret, NextcloudUser, "#0082c9")
	clearIfNoBase(c, base)
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (NextcloudProfile, error) {
		var env struct {
			OCS struct {
				Data NextcloudProfile `json:"data"`
			} `json:"ocs"`
		}
		id := tokenString(req.Tokens, "user_id")
		if id == "" {
			return env.OCS.Data, fmt.Errorf("nextcloud: the token response has no user_id")
		}
		u := strings.TrimSuffix(req.Endpoint.URL, "/") + "/" + url.PathEscape(id) + "?format=json"
		h := authHeader("Bearer", req.Tokens.AccessToken)
		h.Set("OCS-APIRequest", "true")
		if err := fetchJSON(ctx, req.client(), userinfoCall{url: u, header: h}, &env); err != nil {
			return env.OCS.Data, err
		}
		p := env.OCS.Data
		if p.ID != "" && base != "" {
			p.AvatarURL = base + "/avatar/" + url.PathEscape(p.ID) + "/512"
		}
		return p, nil
	}
	return c
}

// NextcloudUser maps a Nextcloud user: id, email, displayname, the avatar
// URL.
func NextcloudUser(_ context.Context, p NextcloudProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Email, Name: str(first(p.DisplayName, p.ID)), Image: str(p.AvatarURL)}, nil
}

// NotionProfile is the person who installed a Notion public integration:
// the bot user's owner.user (GET /v1/users/me).
type NotionProfile struct {
	Object    string `json:"object"`
	ID        string `json:"id"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	AvatarURL string `json:"avatar_url"`
	Person    struct {
		Email string `json:"email"`
	} `json:"person"`
}

// notionVersion is the Notion API version the Notion provider sends.
const notionVersion = "2022-06-28"

// Notion returns the Notion public integration provider (id "notion"),
// asking for owner=user, with the state check. Its userinfo handler reads
// the integration's bot user (GET /v1/users/me, with the Notion-Version
// header) and returns the user who owns it.
func Notion(clientID, clientSecret string) *OAuth2Config[NotionProfile] {
	c := oauthBuiltIn("notion", "Notion", "https://api.notion.com/v1/oauth/authorize", "",
		"https://api.notion.com/v1/oauth/token", "https://api.notion.com/v1/users/me", clientID, clientSecret, NotionUser, "#000000")
	c.Authorization.Params = params("owner", "user")
	c.Checks = Checks{CheckState}
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (NotionProfile, error) {
		var bot struct {
			Bot struct {
				Owner struct {
					Type string        `json:"type"`
					User NotionProfile `json:"user"`
				} `json:"owner"`
			} `json:"bot"`
		}
		h := authHeader("Bearer", req.Tokens.AccessToken)
		h.Set("Notion-Version", notionVersion)
		if err := fetchJSON(ctx, req.client(), userinfoCall{url: req.Endpoint.WithParams(), header: h}, &bot); err != nil {
			return NotionProfile{}, err
		}
		if bot.Bot.Owner.Type != "user" {
			return NotionProfile{}, fmt.Errorf("notion: the integration is owned by a %q, not a user; install it with owner=user", bot.Bot.Owner.Type)
		}
		return bot.Bot.Owner.User, nil
	}
	return c
}

// NotionUser maps the owning Notion user: id, person.email, name,
// avatar_url.
func NotionUser(_ context.Context, p NotionProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Person.Email, Name: str(p.Name), Image: str(p.AvatarURL)}, nil
}

// OssoProfile is the Osso user (GET /oauth/me).
type OssoProfile struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	IDP       string `json:"idp"`
	Requested struct {
		Domain string `json:"domain"`
		Email  string `json:"email"`
	} `json:"requested"`
}

// Osso returns the Osso (SAML single sign-on) OAuth 2.0 provider (id
// "osso") for the deployment at issuer, with the state check.
func Osso(clientID, clientSecret, issuer string) *OAuth2Config[OssoProfile] {
	base := baseURL(issuer)
	c := oauthBuiltIn("osso", "Osso", base+"/oauth/authorize", "",
		base+"/oauth/token", base+"/oauth/me", clientID, clientSecret, OssoUser, "#5a67d8")
	clearIfNoBase(c, base)
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// OssoUser maps an Osso user: id, email (also the name, SAML giving no
// other); no picture.
func OssoUser(_ context.Context, p OssoProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Email, Name: str(p.Email)}, nil
}

// OsuProfile is the osu! user (GET /api/v2/me).
type OsuProfile struct {
	ID          int64  `json:"id"`
	Username    string `json:"username"`
	AvatarURL   string `json:"avatar_url"`
	CountryCode string `json:"country_code"`
	IsSupporter bool   `json:"is_supporter"`
}

// Osu returns the osu! OAuth 2.0 provider (id "osu"), asking for
// identify, with the state check. osu! gives no e-mail address.
func Osu(clientID, clientSecret string) *OAuth2Config[OsuProfile] {
	c := oauthBuiltIn("osu", "osu!", "https://osu.ppy.sh/oauth/authorize", "identify",
		"https://osu.ppy.sh/oauth/token", "https://osu.ppy.sh/api/v2/me", clientID, clientSecret, OsuUser, "#ff66aa")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// OsuUser maps an osu! user: id, username, avatar_url.
func OsuUser(_ context.Context, p OsuProfile, _ TokenSet) (User, error) {
	return User{ID: itoa(p.ID), Name: str(p.Username), Image: str(p.AvatarURL)}, nil
}

// PatreonProfile is the Patreon identity (GET /api/oauth2/v2/identity).
type PatreonProfile struct {
	Data struct {
		ID         string `json:"id"`
		Type       string `json:"type"`
		Attributes struct {
			FullName string `json:"full_name"`
			Email    string `json:"email"`
			ImageURL string `json:"image_url"`
			Vanity   string `json:"vanity"`
		} `json:"attributes"`
	} `json:"data"`
}

// Patreon returns the Patreon OAuth 2.0 provider (id "patreon"), asking
// for identity and identity[email] and reading the v2 identity with its
// full_name, email and image_url fields, with the state check,
// authenticating with client_secret_post.
func Patreon(clientID, clientSecret string) *OAuth2Config[PatreonProfile] {
	c := oauthBuiltIn("patreon", "Patreon", "https://www.patreon.com/oauth2/authorize", "identity identity[email]",
		"https://www.patreon.com/api/oauth2/token", "https://www.patreon.com/api/oauth2/v2/identity", clientID, clientSecret, PatreonUser, "#e85b46")
	c.Userinfo.Params = params("fields[user]", "full_name,email,image_url")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// PatreonUser maps a Patreon identity: data.id and its attributes email,
// full_name, image_url.
func PatreonUser(_ context.Context, p PatreonProfile, _ TokenSet) (User, error) {
	a := p.Data.Attributes
	return User{ID: p.Data.ID, Email: a.Email, Name: str(first(a.FullName, a.Vanity)), Image: str(a.ImageURL)}, nil
}

// PinterestProfile is the Pinterest account (GET /v5/user_account).
type PinterestProfile struct {
	ID             string `json:"id"`
	AccountType    string `json:"account_type"`
	Username       string `json:"username"`
	BusinessName   string `json:"business_name"`
	ProfileImage   string `json:"profile_image"`
	WebsiteURL     string `json:"website_url"`
	FollowerCount  int64  `json:"follower_count"`
	FollowingCount int64  `json:"following_count"`
}

// Pinterest returns the Pinterest OAuth 2.0 provider (id "pinterest"),
// asking for user_accounts:read, with the state check. Pinterest gives no
// e-mail address.
func Pinterest(clientID, clientSecret string) *OAuth2Config[PinterestProfile] {
	c := oauthBuiltIn("pinterest", "Pinterest", "https://www.pinterest.com/oauth", "user_accounts:read",
		"https://api.pinterest.com/v5/oauth/token", "https://api.pinterest.com/v5/user_account", clientID, clientSecret, PinterestUser, "#bd081c")
	c.Checks = Checks{CheckState}
	return c
}

// PinterestUser maps a Pinterest account: username as the id (stable for
// Pinterest, and the id field is absent from older responses) and the
// name, profile_image.
func PinterestUser(_ context.Context, p PinterestProfile, _ TokenSet) (User, error) {
	return User{ID: p.Username, Name: str(first(p.BusinessName, p.Username)), Image: str(p.ProfileImage)}, nil
}

// PipedriveProfile is the Pipedrive user (GET /v1/users/me).
type PipedriveProfile struct {
	Success bool `json:"success"`
	Data    struct {
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		Email       string `json:"email"`
		IconURL     string `json:"icon_url"`
		CompanyID   int64  `json:"company_id"`
		CompanyName string `json:"company_name"`
		Locale      string `json:"locale"`
	} `json:"data"`
}

// Pipedrive returns the Pipedrive OAuth 2.0 provider (id "pipedrive")
// with the state check.
func Pipedrive(clientID, clientSecret string) *OAuth2Config[PipedriveProfile] {
	c := oauthBuiltIn("pipedrive", "Pipedrive", "https://oauth.pipedrive.com/oauth/authorize", "",
		"https://oauth.pipedrive.com/oauth/token", "https://api.pipedrive.com/v1/users/me", clientID, clientSecret, PipedriveUser, "#017737")
	c.Checks = Checks{CheckState}
	return c
}

// PipedriveUser maps a Pipedrive user: data.id, email, name, icon_url.
func PipedriveUser(_ context.Context, p PipedriveProfile, _ TokenSet) (User, error) {
	d := p.Data
	return User{ID: itoa(d.ID), Email: d.Email, Name: str(d.Name), Image: str(d.IconURL)}, nil
}

// RedditProfile is the Reddit account (GET /api/v1/me).
type RedditProfile struct {
	ID               string  `json:"id"`
	Name             string  `json:"name"`
	IconImg          string  `json:"icon_img"`
	SnoovatarImg     string  `json:"snoovatar_img"`
	Verified         bool    `json:"verified"`
	HasVerifiedEmail bool    `json:"has_verified_email"`
	Created          float64 `json:"created"`
}

// Reddit returns the Reddit OAuth 2.0 provider (id "reddit"), asking for
// identity, with the state check (Reddit has no PKCE). Reddit gives no
// e-mail address.
func Reddit(clientID, clientSecret string) *OAuth2Config[RedditProfile] {
	c := oauthBuiltIn("reddit", "Reddit", "https://www.reddit.com/api/v1/authorize", "identity",
		"https://www.reddit.com/api/v1/access_token", "https://oauth.reddit.com/api/v1/me", clientID, clientSecret, RedditUser, "#FF4500")
	c.Checks = Checks{CheckState}
	return c
}

// RedditUser maps a Reddit account: id, name, icon_img (HTML-escaped by
// Reddit: &amp; is undone), else snoovatar_img.
func RedditUser(_ context.Context, p RedditProfile, _ TokenSet) (User, error) {
	img := strings.ReplaceAll(first(p.IconImg, p.SnoovatarImg), "&amp;", "&")
	return User{ID: p.ID, Name: str(p.Name), Image: str(img)}, nil
}

// SpotifyProfile is the Spotify user (GET /v1/me).
type SpotifyProfile struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	Email       string `json:"email"`
	Country     string `json:"country"`
	Product     string `json:"product"`
	Images      []struct {
		URL    string `json:"url"`
		Height int    `json:"height"`
		Width  int    `json:"width"`
	} `json:"images"`
}

// Spotify returns the Spotify OAuth 2.0 provider (id "spotify"), asking
// for user-read-email.
func Spotify(clientID, clientSecret string) *OAuth2Config[SpotifyProfile] {
	return oauthBuiltIn("spotify", "Spotify", "https://accounts.spotify.com/authorize", "user-read-email",
		"https://accounts.spotify.com/api/token", "https://api.spotify.com/v1/me", clientID, clientSecret, SpotifyUser, "#1db954")
}

// SpotifyUser maps a Spotify user: id, email, display_name (else id), the
// first image.
func SpotifyUser(_ context.Context, p SpotifyProfile, _ TokenSet) (User, error) {
	u := User{ID: p.ID, Email: p.Email, Name: str(first(p.DisplayName, p.ID))}
	if len(p.Images) > 0 {
		u.Image = str(p.Images[0].URL)
	}
	return u, nil
}

// StravaProfile is the Strava athlete (GET /api/v3/athlete).
type StravaProfile struct {
	ID            int64  `json:"id"`
	Username      string `json:"username"`
	Firstname     string `json:"firstname"`
	Lastname      string `json:"lastname"`
	City          string `json:"city"`
	Country       string `json:"country"`
	Profile       string `json:"profile"`
	ProfileMedium string `json:"profile_medium"`
}

// Strava returns the Strava OAuth 2.0 provider (id "strava"), asking for
// read with approval_prompt auto, with the state check, authenticating
// with client_secret_post. Strava gives no e-mail address.
func Strava(clientID, clientSecret string) *OAuth2Config[StravaProfile] {
	c := oauthBuiltIn("strava", "Strava", "https://www.strava.com/oauth/authorize", "read",
		"https://www.strava.com/oauth/token", "https://www.strava.com/api/v3/athlete", clientID, clientSecret, StravaUser, "#fc4c02")
	c.Authorization.Params.Set("approval_prompt", "auto")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// StravaUser maps a Strava athlete: id, first and last name, profile (the
// large picture).
func StravaUser(_ context.Context, p StravaProfile, _ TokenSet) (User, error) {
	return User{ID: itoa(p.ID), Name: str(first(joinNonEmpty(p.Firstname, p.Lastname), p.Username)), Image: str(first(p.Profile, p.ProfileMedium))}, nil
}

// ThreadsProfile is the Threads user (GET graph.threads.net/v1.0/me).
type ThreadsProfile struct {
	ID                       string `json:"id"`
	Username                 string `json:"username"`
	Name                     string `json:"name"`
	ThreadsProfilePictureURL string `json:"threads_profile_picture_url"`
	ThreadsBiography         string `json:"threads_biography"`
}

// Threads returns the Threads (Meta) OAuth 2.0 provider (id "threads"),
// asking for threads_basic, with the state check, authenticating with
// client_secret_post. Threads gives no e-mail address.
func Threads(clientID, clientSecret string) *OAuth2Config[ThreadsProfile] {
	c := oauthBuiltIn("threads", "Threads", "https://threads.net/oauth/authorize", "threads_basic",
		"https://graph.threads.net/oauth/access_token", "https://graph.threads.net/v1.0/me", clientID, clientSecret, ThreadsUser, "#000000")
	c.Userinfo.Params = params("fields", "id,username,name,threads_profile_picture_url")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// ThreadsUser maps a Threads user: id, name (else username),
// threads_profile_picture_url.
func ThreadsUser(_ context.Context, p ThreadsProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Name: str(first(p.Name, p.Username)), Image: str(p.ThreadsProfilePictureURL)}, nil
}

// TraktProfile is the Trakt user (GET /users/me?extended=full).
type TraktProfile struct {
	Username string `json:"username"`
	Private  bool   `json:"private"`
	Name     string `json:"name"`
	VIP      bool   `json:"vip"`
	IDs      struct {
		Slug string `json:"slug"`
		UUID string `json:"uuid"`
	} `json:"ids"`
	Images struct {
		Avatar struct {
			Full string `json:"full"`
		} `json:"avatar"`
	} `json:"images"`
}

// Trakt returns the Trakt OAuth 2.0 provider (id "trakt") with the state
// check, authenticating with client_secret_post. Trakt's API wants the
// trakt-api-version and trakt-api-key (the client id) headers. Trakt
// gives no e-mail address.
func Trakt(clientID, clientSecret string) *OAuth2Config[TraktProfile] {
	c := oauthBuiltIn("trakt", "Trakt", "https://trakt.tv/oauth/authorize", "",
		"https://api.trakt.tv/oauth/token", "https://api.trakt.tv/users/me", clientID, clientSecret, TraktUser, "#ED2224")
	c.Userinfo.Params = params("extended", "full")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (TraktProfile, error) {
		var p TraktProfile
		h := authHeader("Bearer", req.Tokens.AccessToken)
		h.Set("trakt-api-version", "2")
		h.Set("trakt-api-key", first(req.ClientID, clientID))
		err := fetchJSON(ctx, req.client(), userinfoCall{url: req.Endpoint.WithParams(), header: h}, &p)
		return p, err
	}
	return c
}

// TraktUser maps a Trakt user: ids.slug (else ids.uuid), name (else
// username), images.avatar.full.
func TraktUser(_ context.Context, p TraktProfile, _ TokenSet) (User, error) {
	return User{ID: first(p.IDs.Slug, p.IDs.UUID), Name: str(first(p.Name, p.Username)), Image: str(p.Images.Avatar.Full)}, nil
}

// TwitterProfile is the X (Twitter) user (GET /2/users/me).
type TwitterProfile struct {
	Data struct {
		ID              string `json:"id"`
		Name            string `json:"name"`
		Username        string `json:"username"`
		ProfileImageURL string `json:"profile_image_url"`
		ConfirmedEmail  string `json:"confirmed_email,omitempty"`
	} `json:"data"`
}

// Twitter returns the X (Twitter) OAuth 2.0 provider (id "twitter"),
// asking for users.read, tweet.read and offline.access, with the pkce and
// state checks X requires. X gives an e-mail address only with the
// users.email scope (add it to the scope, and confirmed_email to
// user.fields).
func Twitter(clientID, clientSecret string) *OAuth2Config[TwitterProfile] {
	c := oauthBuiltIn("twitter", "Twitter", "https://x.com/i/oauth2/authorize", "users.read tweet.read offline.access",
		"https://api.x.com/2/oauth2/token", "https://api.x.com/2/users/me", clientID, clientSecret, TwitterUser, "#000000")
	c.Userinfo.Params = params("user.fields", "profile_image_url")
	c.Checks = Checks{CheckPKCE, CheckState}
	return c
}

// TwitterUser maps an X user: data.id, data.name (else username),
// confirmed_email, profile_image_url.
func TwitterUser(_ context.Context, p TwitterProfile, _ TokenSet) (User, error) {
	d := p.Data
	return User{ID: d.ID, Email: d.ConfirmedEmail, Name: str(first(d.Name, d.Username)), Image: str(d.ProfileImageURL)}, nil
}

// VKProfile is one VK user (users.get), with the e-mail address of the
// token response.
type VKProfile struct {
	ID        int64  `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Photo100  string `json:"photo_100"`
	// Email comes from the token response, where VK puts it.
	Email string `json:"email,omitempty"`
}

// vkAPIVersion is the VK API version the VK provider asks for.
const vkAPIVersion = "5.131"

// VK returns the VK OAuth 2.0 provider (id "vk"), asking for email, with
// the state check, authenticating with client_secret_post. VK returns the
// e-mail address in the token response (email), and the profile from
// users.get as a list under response.
func VK(clientID, clientSecret string) *OAuth2Config[VKProfile] {
	c := oauthBuiltIn("vk", "VK", "https://oauth.vk.com/authorize", "email",
		"https://oauth.vk.com/access_token", "https://api.vk.com/method/users.get", clientID, clientSecret, VKUser, "#0077FF")
	c.Authorization.Params.Set("v", vkAPIVersion)
	c.Token.Params = params("v", vkAPIVersion)
	c.Userinfo.Params = params("fields", "photo_100", "v", vkAPIVersion)
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (VKProfile, error) {
		var res struct {
			Response []VKProfile `json:"response"`
			Error    *struct {
				Code int    `json:"error_code"`
				Msg  string `json:"error_msg"`
			} `json:"error"`
		}
		if err := fetchJSON(ctx, req.client(), userinfoCall{url: req.Endpoint.WithParams(), header: authHeader("Bearer", req.Tokens.AccessToken)}, &res); err != nil {
			return VKProfile{}, err
		}
		if res.Error != nil {
			return VKProfile{}, fmt.Errorf("vk users.get: error %d: %s", res.Error.Code, res.Error.Msg)
		}
		if len(res.Response) == 0 {
			return VKProfile{}, fmt.Errorf("vk users.get: no user in the response")
		}
		p := res.Response[0]
		p.Email = tokenString(req.Tokens, "email")
		return p, nil
	}
	return c
}

// VKUser maps a VK user: id, the token response's email, first and last
// name, photo_100.
func VKUser(_ context.Context, p VKProfile, _ TokenSet) (User, error) {
	return User{ID: itoa(p.ID), Email: p.Email, Name: str(joinNonEmpty(p.FirstName, p.LastName)), Image: str(p.Photo100)}, nil
}

// WebexProfile is the Webex person (GET /v1/people/me).
type WebexProfile struct {
	ID          string   `json:"id"`
	Emails      []string `json:"emails"`
	DisplayName string   `json:"displayName"`
	NickName    string   `json:"nickName"`
	FirstName   string   `json:"firstName"`
	LastName    string   `json:"lastName"`
	Avatar      string   `json:"avatar"`
	OrgID       string   `json:"orgId"`
}

// Webex returns the Webex OAuth 2.0 provider (id "webex"), asking for
// spark:kms and spark:people_read, authenticating with client_secret_post.
func Webex(clientID, clientSecret string) *OAuth2Config[WebexProfile] {
	c := oauthBuiltIn("webex", "Webex", "https://webexapis.com/v1/authorize", "spark:kms spark:people_read",
		"https://webexapis.com/v1/access_token", "https://webexapis.com/v1/people/me", clientID, clientSecret, WebexUser, "#07C1E4")
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// WebexUser maps a Webex person: id, the first of emails, displayName,
// avatar.
func WebexUser(_ context.Context, p WebexProfile, _ TokenSet) (User, error) {
	u := User{ID: p.ID, Name: str(first(p.DisplayName, joinNonEmpty(p.FirstName, p.LastName))), Image: str(p.Avatar)}
	if len(p.Emails) > 0 {
		u.Email = p.Emails[0]
	}
	return u, nil
}

// WikimediaProfile is the Wikimedia OAuth 2.0 profile (GET
// /w/rest.php/oauth2/resource/profile).
type WikimediaProfile struct {
	Sub            string   `json:"sub"`
	Username       string   `json:"username"`
	Realname       string   `json:"realname"`
	Email          string   `json:"email"`
	ConfirmedEmail bool     `json:"confirmed_email"`
	EditCount      int64    `json:"editcount"`
	Blocked        bool     `json:"blocked"`
	Groups         []string `json:"groups"`
	Rights         []string `json:"rights"`
	Registered     string   `json:"registered"`
}

// Wikimedia returns the Wikimedia (Wikipedia and sister projects) OAuth
// 2.0 provider (id "wikimedia") at meta.wikimedia.org. The e-mail address
// is in the profile only when the consumer was granted it.
func Wikimedia(clientID, clientSecret string) *OAuth2Config[WikimediaProfile] {
	const base = "https://meta.wikimedia.org/w/rest.php/oauth2"
	return oauthBuiltIn("wikimedia", "Wikimedia", base+"/authorize", "",
		base+"/access_token", base+"/resource/profile", clientID, clientSecret, WikimediaUser, "#000000")
}

// WikimediaUser maps a Wikimedia profile: sub, email, username; no
// picture.
func WikimediaUser(_ context.Context, p WikimediaProfile, _ TokenSet) (User, error) {
	return User{ID: p.Sub, Email: p.Email, Name: str(first(p.Username, p.Realname))}, nil
}

// WordPressProfile is the WordPress.com user (GET /rest/v1/me).
type WordPressProfile struct {
	ID            int64  `json:"ID"`
	DisplayName   string `json:"display_name"`
	Username      string `json:"username"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	AvatarURL     string `json:"avatar_URL"`
	ProfileURL    string `json:"profile_URL"`
	PrimaryBlog   int64  `json:"primary_blog"`
}

// WordPress returns the WordPress.com OAuth 2.0 provider (id
// "wordpress"), asking for auth, with the state check, authenticating
// with client_secret_post.
func WordPress(clientID, clientSecret string) *OAuth2Config[WordPressProfile] {
	c := oauthBuiltIn("wordpress", "WordPress.com", "https://public-api.wordpress.com/oauth2/authorize", "auth",
		"https://public-api.wordpress.com/oauth2/token", "https://public-api.wordpress.com/rest/v1/me", clientID, clientSecret, WordPressUser, "#3499cd")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// WordPressUser maps a WordPress.com user: ID, email, display_name (else
// username), avatar_URL.
func WordPressUser(_ context.Context, p WordPressProfile, _ TokenSet) (User, error) {
	return User{ID: itoa(p.ID), Email: p.Email, Name: str(first(p.DisplayName, p.Username)), Image: str(p.AvatarURL)}, nil
}

// WorkOSProfile is the WorkOS SSO profile (GET /sso/profile).
type WorkOSProfile struct {
	Object         string         `json:"object"`
	ID             string         `json:"id"`
	OrganizationID string         `json:"organization_id"`
	ConnectionID   string         `json:"connection_id"`
	ConnectionType string         `json:"connection_type"`
	IdpID          string         `json:"idp_id"`
	Email          string         `json:"email"`
	FirstName      string         `json:"first_name"`
	LastName       string         `json:"last_name"`
	RawAttributes  map[string]any `json:"raw_attributes"`
}

// WorkOS returns the WorkOS SSO provider (id "workos") with the state
// check, authenticating with client_secret_post. connection, when not
// empty, is sent as the connection to sign in with; otherwise pass
// organization, connection or provider as authorization parameters.
func WorkOS(clientID, clientSecret, connection string) *OAuth2Config[WorkOSProfile] {
	c := oauthBuiltIn("workos", "WorkOS", "https://api.workos.com/sso/authorize", "",
		"https://api.workos.com/sso/token", "https://api.workos.com/sso/profile", clientID, clientSecret, WorkOSUser, "#6363f1")
	if s := strings.TrimSpace(connection); s != "" {
		c.Authorization.Params = params("connection", s)
	}
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// WorkOSUser maps a WorkOS profile: id, email, first and last name, the
// raw attribute picture if the identity provider sent one.
func WorkOSUser(_ context.Context, p WorkOSProfile, _ TokenSet) (User, error) {
	pic, _ := p.RawAttributes["picture"].(string)
	return User{ID: p.ID, Email: p.Email, Name: str(joinNonEmpty(p.FirstName, p.LastName)), Image: str(pic)}, nil
}

// YandexProfile is the Yandex ID user (GET login.yandex.ru/info).
type YandexProfile struct {
	ID              string   `json:"id"`
	Login           string   `json:"login"`
	ClientID        string   `json:"client_id"`
	DisplayName     string   `json:"display_name"`
	RealName        string   `json:"real_name"`
	FirstName       string   `json:"first_name"`
	LastName        string   `json:"last_name"`
	DefaultEmail    string   `json:"default_email"`
	Emails          []string `json:"emails"`
	DefaultAvatarID string   `json:"default_avatar_id"`
	IsAvatarEmpty   bool     `json:"is_avatar_empty"`
	PSUID           string   `json:"psuid"`
}

// Yandex returns the Yandex ID OAuth 2.0 provider (id "yandex"), asking
// for login:info, login:email and login:avatar. Its userinfo endpoint
// takes the token as "Authorization: OAuth {token}".
func Yandex(clientID, clientSecret string) *OAuth2Config[YandexProfile] {
	c := oauthBuiltIn("yandex", "Yandex", "https://oauth.yandex.ru/authorize", "login:info login:email login:avatar",
		"https://oauth.yandex.ru/token", "https://login.yandex.ru/info", clientID, clientSecret, YandexUser, "#ffcc00")
	c.Userinfo.Params = params("format", "json")
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (YandexProfile, error) {
		var p YandexProfile
		err := fetchJSON(ctx, req.client(), userinfoCall{url: req.Endpoint.WithParams(), header: authHeader("OAuth", req.Tokens.AccessToken)}, &p)
		return p, err
	}
	return c
}

// YandexUser maps a Yandex user: id, default_email (else the first of
// emails), display_name (else real_name, else first_name), and the
// avatar's 200px URL unless is_avatar_empty.
func YandexUser(_ context.Context, p YandexProfile, _ TokenSet) (User, error) {
	u := User{ID: p.ID, Email: p.DefaultEmail, Name: str(first(p.DisplayName, p.RealName, p.FirstName, p.Login))}
	if u.Email == "" && len(p.Emails) > 0 {
		u.Email = p.Emails[0]
	}
	if !p.IsAvatarEmpty && p.DefaultAvatarID != "" {
		u.Image = str("https://avatars.yandex.net/get-yapic/" + url.PathEscape(p.DefaultAvatarID) + "/islands-200")
	}
	return u, nil
}

// ZohoProfile is the Zoho Accounts user (GET /oauth/user/info).
type ZohoProfile struct {
	ZUID        FlexString `json:"ZUID"`
	FirstName   string     `json:"First_Name"`
	LastName    string     `json:"Last_Name"`
	DisplayName string     `json:"Display_Name"`
	Email       string     `json:"Email"`
}

// Zoho returns the Zoho Accounts OAuth 2.0 provider (id "zoho", the US
// data center), asking for AaaServer.profile.Read, with the state check,
// authenticating with client_secret_post. Zoho's APIs take the token as
// "Authorization: Zoho-oauthtoken {token}".
func Zoho(clientID, clientSecret string) *OAuth2Config[ZohoProfile] {
	c := oauthBuiltIn("zoho", "Zoho", "https://accounts.zoho.com/oauth/v2/auth", "AaaServer.profile.Read",
		"https://accounts.zoho.com/oauth/v2/token", "https://accounts.zoho.com/oauth/user/info", clientID, clientSecret, ZohoUser, "#e42527")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (ZohoProfile, error) {
		var p ZohoProfile
		err := fetchJSON(ctx, req.client(), userinfoCall{url: req.Endpoint.WithParams(), header: authHeader("Zoho-oauthtoken", req.Tokens.AccessToken)}, &p)
		return p, err
	}
	return c
}

// ZohoUser maps a Zoho user: ZUID, Email, Display_Name (else first and
// last name); no picture.
func ZohoUser(_ context.Context, p ZohoProfile, _ TokenSet) (User, error) {
	return User{ID: string(p.ZUID), Email: p.Email, Name: str(first(p.DisplayName, joinNonEmpty(p.FirstName, p.LastName)))}, nil
}

// ZoomProfile is the Zoom user (GET /v2/users/me).
type ZoomProfile struct {
	ID            string `json:"id"`
	FirstName     string `json:"first_name"`
	LastName      string `json:"last_name"`
	DisplayName   string `json:"display_name"`
	Email         string `json:"email"`
	Type          int    `json:"type"`
	PicURL        string `json:"pic_url"`
	AccountID     string `json:"account_id"`
	Status        string `json:"status"`
	VerifiedState int    `json:"verified"`
}

// Zoom returns the Zoom OAuth 2.0 provider (id "zoom").
func Zoom(clientID, clientSecret string) *OAuth2Config[ZoomProfile] {
	return oauthBuiltIn("zoom", "Zoom", "https://zoom.us/oauth/authorize", "",
		"https://zoom.us/oauth/token", "https://api.zoom.us/v2/users/me", clientID, clientSecret, ZoomUser, "#0b5cff")
}

// ZoomUser maps a Zoom user: id, email, display_name (else first and last
// name), pic_url.
func ZoomUser(_ context.Context, p ZoomProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Email, Name: str(first(p.DisplayName, joinNonEmpty(p.FirstName, p.LastName))), Image: str(p.PicURL)}, nil
}
