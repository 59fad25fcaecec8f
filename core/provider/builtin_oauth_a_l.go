package provider

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// This file and builtin_oauth_m_z.go hold the OAuth 2.0 built-ins, in
// identifier order: each is its profile type (the provider's documented
// profile response, reduced to what is useful), its factory and its
// profile mapping.

// oauthBuiltIn is the common shape of an OAuth 2.0 built-in. scope, when
// not empty, is sent as the authorization request's scope.
func oauthBuiltIn[P any](id, name, authURL, scope, tokenURL, userinfoURL, clientID, clientSecret string, profile ProfileCallback[P], color string) *OAuth2Config[P] {
	c := &OAuth2Config[P]{
		ID:            id,
		Name:          name,
		Authorization: Endpoint{URL: authURL},
		Token:         TokenEndpoint{URL: tokenURL},
		Userinfo:      UserinfoEndpoint[P]{URL: userinfoURL},
		ClientID:      clientID,
		ClientSecret:  clientSecret,
		Profile:       profile,
		Style:         ButtonStyle{Logo: "/" + id + ".svg", BrandColor: color},
	}
	if scope != "" {
		c.Authorization.Params = params("scope", scope)
	}
	return c
}

// FortyTwoSchoolProfile is the 42 intranet user (GET /v2/me).
type FortyTwoSchoolProfile struct {
	ID            int64  `json:"id"`
	Email         string `json:"email"`
	Login         string `json:"login"`
	FirstName     string `json:"first_name"`
	LastName      string `json:"last_name"`
	UsualFullName string `json:"usual_full_name"`
	Displayname   string `json:"displayname"`
	Image         struct {
		Link string `json:"link"`
	} `json:"image"`
	ImageURL string `json:"image_url,omitempty"`
}

// FortyTwoSchool returns the 42 School OAuth 2.0 provider (id
// "42-school"), asking for public, with the state check.
func FortyTwoSchool(clientID, clientSecret string) *OAuth2Config[FortyTwoSchoolProfile] {
	c := oauthBuiltIn("42-school", "42 School", "https://api.intra.42.fr/oauth/authorize", "public",
		"https://api.intra.42.fr/oauth/token", "https://api.intra.42.fr/v2/me", clientID, clientSecret, FortyTwoSchoolUser, "#000000")
	c.Checks = Checks{CheckState}
	return c
}

// FortyTwoSchoolUser maps a 42 profile: id, email, usual_full_name (else
// displayname, else login), image.link (else image_url).
func FortyTwoSchoolUser(_ context.Context, p FortyTwoSchoolProfile, _ TokenSet) (User, error) {
	return User{ID: itoa(p.ID), Email: p.Email, Name: str(first(p.UsualFullName, p.Displayname, p.Login)),
		Image: str(first(p.Image.Link, p.ImageURL))}, nil
}

func itoa(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// AtlassianProfile is the Atlassian account (GET https://api.atlassian.com/me).
type AtlassianProfile struct {
	AccountID     string `json:"account_id"`
	AccountType   string `json:"account_type"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	Name          string `json:"name"`
	Nickname      string `json:"nickname"`
	Picture       string `json:"picture"`
	AccountStatus string `json:"account_status"`
}

// Atlassian returns the Atlassian (Jira, Confluence) OAuth 2.0 (3LO)
// provider (id "atlassian"), asking for read:me with audience
// api.atlassian.com and prompt consent, with the state check Atlassian
// requires.
func Atlassian(clientID, clientSecret string) *OAuth2Config[AtlassianProfile] {
	c := oauthBuiltIn("atlassian", "Atlassian", "https://auth.atlassian.com/authorize", "read:me",
		"https://auth.atlassian.com/oauth/token", "https://api.atlassian.com/me", clientID, clientSecret, AtlassianUser, "#0052cc")
	c.Authorization.Params.Set("audience", "api.atlassian.com")
	c.Authorization.Params.Set("prompt", "consent")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// AtlassianUser maps an Atlassian profile: account_id, email, name (else
// nickname), picture.
func AtlassianUser(_ context.Context, p AtlassianProfile, _ TokenSet) (User, error) {
	return User{ID: p.AccountID, Email: p.Email, Name: str(first(p.Name, p.Nickname)), Image: str(p.Picture)}, nil
}

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

// Bitbucket returns the Bitbucket Cloud OAuth 2.0 provider (id
// "bitbucket"), asking for account and email. Its userinfo handler reads
// /2.0/user, then /2.0/user/emails for the primary confirmed address.
func Bitbucket(clientID, clientSecret string) *OAuth2Config[BitbucketProfile] {
	c := oauthBuiltIn("bitbucket", "Bitbucket", "https://bitbucket.org/site/oauth2/authorize", "account email",
		"https://bitbucket.org/site/oauth2/access_token", "https://api.bitbucket.org/2.0/user", clientID, clientSecret, BitbucketUser, "#205081")
	c.Checks = Checks{CheckPKCE, CheckState}
	c.Userinfo.Request = bitbucketUserinfo
	return c
}

func bitbucketUserinfo(ctx context.Context, req UserinfoRequest) (BitbucketProfile, error) {
	var p BitbucketProfile
	bearer := authHeader("Bearer", req.Tokens.AccessToken)
	if err := fetchJSON(ctx, req.client(), userinfoCall{url: req.Endpoint.WithParams(), header: bearer}, &p); err != nil {
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
	if err := fetchJSON(ctx, req.client(), userinfoCall{url: u, header: bearer}, &emails); err != nil {
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
func BitbucketUser(_ context.Context, p BitbucketProfile, _ TokenSet) (User, error) {
	return User{ID: first(p.AccountID, p.UUID), Email: p.Email, Name: str(first(p.DisplayName, p.Username, p.Nickname)),
		Image: str(p.Links.Avatar.Href)}, nil
}

// BoxProfile is the Box user (GET /2.0/users/me).
type BoxProfile struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	Login     string `json:"login"`
	AvatarURL string `json:"avatar_url"`
	Language  string `json:"language"`
	Status    string `json:"status"`
}

// Box returns the Box OAuth 2.0 provider (id "box") with the state check,
// authenticating with client_secret_post as Box documents.
func Box(clientID, clientSecret string) *OAuth2Config[BoxProfile] {
	c := oauthBuiltIn("box", "Box", "https://account.box.com/api/oauth2/authorize", "",
		"https://api.box.com/oauth2/token", "https://api.box.com/2.0/users/me", clientID, clientSecret, BoxUser, "#0075C9")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// BoxUser maps a Box profile: id, login (the e-mail address), name,
// avatar_url.
func BoxUser(_ context.Context, p BoxProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Login, Name: str(p.Name), Image: str(p.AvatarURL)}, nil
}

// BoxyHQSAMLProfile is the SAML Jackson userinfo response.
type BoxyHQSAMLProfile struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Requested any    `json:"requested,omitempty"`
}

// BoxyHQSAML returns the BoxyHQ SAML Jackson provider (id
// "boxyhq-saml"): SAML single sign-on behind an OAuth 2.0 interface, with
// the pkce and state checks and provider=saml on the authorization
// request. issuer is the Jackson deployment's URL; pass tenant and
// product as authorization parameters when signing in.
func BoxyHQSAML(clientID, clientSecret, issuer string) *OAuth2Config[BoxyHQSAMLProfile] {
	base := baseURL(issuer)
	c := oauthBuiltIn("boxyhq-saml", "BoxyHQ SAML", base+"/api/oauth/authorize", "",
		base+"/api/oauth/token", base+"/api/oauth/userinfo", clientID, clientSecret, BoxyHQSAMLUser, "#25c2a0")
	if base == "" {
		c.Authorization.URL, c.Token.URL, c.Userinfo.URL = "", "", ""
	}
	c.Authorization.Params = params("provider", "saml")
	c.Checks = Checks{CheckPKCE, CheckState}
	return c
}

// BoxyHQSAMLUser maps a SAML Jackson profile: id, email, first and last
// name joined.
func BoxyHQSAMLUser(_ context.Context, p BoxyHQSAMLProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Email, Name: str(joinNonEmpty(p.FirstName, p.LastName))}, nil
}

// ClickUpProfile is the ClickUp user (GET /api/v2/user).
type ClickUpProfile struct {
	User struct {
		ID             int64  `json:"id"`
		Username       string `json:"username"`
		Email          string `json:"email"`
		Color          string `json:"color"`
		ProfilePicture string `json:"profilePicture"`
	} `json:"user"`
}

// ClickUp returns the ClickUp OAuth 2.0 provider (id "click-up") with the
// state check, authenticating with client_secret_post.
func ClickUp(clientID, clientSecret string) *OAuth2Config[ClickUpProfile] {
	c := oauthBuiltIn("click-up", "ClickUp", "https://app.clickup.com/api", "",
		"https://api.clickup.com/api/v2/oauth/token", "https://api.clickup.com/api/v2/user", clientID, clientSecret, ClickUpUser, "#7b68ee")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// ClickUpUser maps a ClickUp user: user.id, email, username,
// profilePicture.
func ClickUpUser(_ context.Context, p ClickUpProfile, _ TokenSet) (User, error) {
	u := p.User
	return User{ID: itoa(u.ID), Email: u.Email, Name: str(u.Username), Image: str(u.ProfilePicture)}, nil
}

// Concept2Profile is the Concept2 Logbook user (GET /api/users/me).
type Concept2Profile struct {
	Data struct {
		ID           int64  `json:"id"`
		Username     string `json:"username"`
		FirstName    string `json:"first_name"`
		LastName     string `json:"last_name"`
		Email        string `json:"email"`
		ProfileImage string `json:"profile_image"`
		Country      string `json:"country"`
	} `json:"data"`
}

// Concept2 returns the Concept2 Logbook OAuth 2.0 provider (id
// "concept2"), asking for user:read and results:write (comma-separated, as
// Concept2 takes them), with the state check, authenticating with
// client_secret_post.
func Concept2(clientID, clientSecret string) *OAuth2Config[Concept2Profile] {
	c := oauthBuiltIn("concept2", "Concept2", "https://log.concept2.com/oauth/authorize", "user:read,results:write",
		"https://log.concept2.com/oauth/access_token", "https://log.concept2.com/api/users/me", clientID, clientSecret, Concept2User, "#003a70")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// Concept2User maps a Concept2 user: data.id, email, username (else first
// and last name), profile_image.
func Concept2User(_ context.Context, p Concept2Profile, _ TokenSet) (User, error) {
	d := p.Data
	return User{ID: itoa(d.ID), Email: d.Email, Name: str(first(d.Username, joinNonEmpty(d.FirstName, d.LastName))), Image: str(d.ProfileImage)}, nil
}

// CoinbaseProfile is the Coinbase user (GET /v2/user).
type CoinbaseProfile struct {
	Data struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Username  string `json:"username"`
		Email     string `json:"email"`
		AvatarURL string `json:"avatar_url"`
	} `json:"data"`
}

// Coinbase returns the Coinbase OAuth 2.0 provider (id "coinbase"),
// asking for wallet:user:email and wallet:user:read.
func Coinbase(clientID, clientSecret string) *OAuth2Config[CoinbaseProfile] {
	c := oauthBuiltIn("coinbase", "Coinbase", "https://login.coinbase.com/oauth2/auth", "wallet:user:email wallet:user:read",
		"https://login.coinbase.com/oauth2/token", "https://api.coinbase.com/v2/user", clientID, clientSecret, CoinbaseUser, "#0052ff")
	c.Checks = Checks{CheckPKCE, CheckState}
	return c
}

// CoinbaseUser maps a Coinbase profile: data.id, data.email, data.name
// (else data.username), data.avatar_url.
func CoinbaseUser(_ context.Context, p CoinbaseProfile, _ TokenSet) (User, error) {
	d := p.Data
	return User{ID: d.ID, Email: d.Email, Name: str(first(d.Name, d.Username)), Image: str(d.AvatarURL)}, nil
}

// DribbbleProfile is the Dribbble user (GET /v2/user).
type DribbbleProfile struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Login     string `json:"login"`
	Email     string `json:"email"`
	AvatarURL string `json:"avatar_url"`
}

// Dribbble returns the Dribbble OAuth 2.0 provider (id "dribbble"),
// asking for public, with the state check.
func Dribbble(clientID, clientSecret string) *OAuth2Config[DribbbleProfile] {
	c := oauthBuiltIn("dribbble", "Dribbble", "https://dribbble.com/oauth/authorize", "public",
		"https://dribbble.com/oauth/token", "https://api.dribbble.com/v2/user", clientID, clientSecret, DribbbleUser, "#ea4c89")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// DribbbleUser maps a Dribbble profile: id, email, name (else login),
// avatar_url.
func DribbbleUser(_ context.Context, p DribbbleProfile, _ TokenSet) (User, error) {
	return User{ID: itoa(p.ID), Email: p.Email, Name: str(first(p.Name, p.Login)), Image: str(p.AvatarURL)}, nil
}

// DropboxProfile is the Dropbox account (POST /2/users/get_current_account).
type DropboxProfile struct {
	AccountID string `json:"account_id"`
	Name      struct {
		DisplayName  string `json:"display_name"`
		GivenName    string `json:"given_name"`
		Surname      string `json:"surname"`
		FamiliarName string `json:"familiar_name"`
	} `json:"name"`
	Email           string `json:"email"`
	EmailVerified   bool   `json:"email_verified"`
	ProfilePhotoURL string `json:"profile_photo_url"`
	Country         string `json:"country"`
	Locale          string `json:"locale"`
}

// Dropbox returns the Dropbox OAuth 2.0 provider (id "dropbox"), asking
// for account_info.read with token_access_type offline (a refresh token).
// Dropbox's account endpoint is an RPC: its userinfo handler POSTs to it
// without a body.
func Dropbox(clientID, clientSecret string) *OAuth2Config[DropboxProfile] {
	c := oauthBuiltIn("dropbox", "Dropbox", "https://www.dropbox.com/oauth2/authorize", "account_info.read",
		"https://api.dropboxapi.com/oauth2/token", "https://api.dropboxapi.com/2/users/get_current_account", clientID, clientSecret, DropboxUser, "#0061fe")
	c.Authorization.Params.Set("token_access_type", "offline")
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (DropboxProfile, error) {
		var p DropboxProfile
		err := fetchJSON(ctx, req.client(), userinfoCall{method: http.MethodPost, url: req.Endpoint.WithParams(),
			header: authHeader("Bearer", req.Tokens.AccessToken)}, &p)
		return p, err
	}
	return c
}

// DropboxUser maps a Dropbox profile: account_id, email,
// name.display_name, profile_photo_url.
func DropboxUser(_ context.Context, p DropboxProfile, _ TokenSet) (User, error) {
	return User{ID: p.AccountID, Email: p.Email, Name: str(first(p.Name.DisplayName, joinNonEmpty(p.Name.GivenName, p.Name.Surname))),
		Image: str(p.ProfilePhotoURL)}, nil
}

// EVEOnlineProfile is the EVE SSO character (GET /oauth/verify).
type EVEOnlineProfile struct {
	CharacterID          int64  `json:"CharacterID"`
	CharacterName        string `json:"CharacterName"`
	ExpiresOn            string `json:"ExpiresOn"`
	Scopes               string `json:"Scopes"`
	TokenType            string `json:"TokenType"`
	CharacterOwnerHash   string `json:"CharacterOwnerHash"`
	IntellectualProperty string `json:"IntellectualProperty"`
}

// EVEOnline returns the EVE Online SSO provider (id "eveonline"), asking
// for publicData, with the state check.
func EVEOnline(clientID, clientSecret string) *OAuth2Config[EVEOnlineProfile] {
	c := oauthBuiltIn("eveonline", "EVE Online", "https://login.eveonline.com/v2/oauth/authorize", "publicData",
		"https://login.eveonline.com/v2/oauth/token", "https://login.eveonline.com/oauth/verify", clientID, clientSecret, EVEOnlineUser, "#000000")
	c.Checks = Checks{CheckState}
	return c
}

// EVEOnlineUser maps an EVE character: CharacterID, CharacterName, and
// the character's portrait on EVE's image server; EVE gives no e-mail
// address.
func EVEOnlineUser(_ context.Context, p EVEOnlineProfile, _ TokenSet) (User, error) {
	id := itoa(p.CharacterID)
	u := User{ID: id, Name: str(p.CharacterName)}
	if id != "" {
		u.Image = str("https://images.evetech.net/characters/" + id + "/portrait?size=128")
	}
	return u, nil
}

// EventbriteProfile is the Eventbrite user (GET /v3/users/me/).
type EventbriteProfile struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Emails    []struct {
		Email    string `json:"email"`
		Verified bool   `json:"verified"`
		Primary  bool   `json:"primary"`
	} `json:"emails"`
	ImageID string `json:"image_id"`
}

// Eventbrite returns the Eventbrite OAuth 2.0 provider (id "eventbrite"),
// asking for user.profile, with the state check, authenticating with
// client_secret_post.
func Eventbrite(clientID, clientSecret string) *OAuth2Config[EventbriteProfile] {
	c := oauthBuiltIn("eventbrite", "Eventbrite", "https://www.eventbrite.com/oauth/authorize", "user.profile",
		"https://www.eventbrite.com/oauth/token", "https://www.eventbriteapi.com/v3/users/me/", clientID, clientSecret, EventbriteUser, "#f05537")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// EventbriteUser maps an Eventbrite user: id, the primary address of
// emails, name (else first and last name), and the image on Eventbrite's
// image service when image_id is set.
func EventbriteUser(_ context.Context, p EventbriteProfile, _ TokenSet) (User, error) {
	u := User{ID: p.ID, Name: str(first(p.Name, joinNonEmpty(p.FirstName, p.LastName)))}
	for _, e := range p.Emails {
		if e.Primary {
			u.Email = e.Email
			break
		}
	}
	if p.ImageID != "" {
		u.Image = str("https://img.evbuc.com/" + url.QueryEscape("https://cdn.evbuc.com/images/"+p.ImageID+"/1/original.jpg"))
	}
	return u, nil
}

// FacebookProfile is the Facebook user (GET /me?fields=id,name,email,picture).
type FacebookProfile struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	Picture struct {
		Data struct {
			URL          string `json:"url"`
			Height       int    `json:"height"`
			Width        int    `json:"width"`
			IsSilhouette bool   `json:"is_silhouette"`
		} `json:"data"`
	} `json:"picture"`
}

// Facebook returns the Facebook Login OAuth 2.0 provider (id "facebook"),
// asking for email and reading id, name, email and picture from the Graph
// API.
func Facebook(clientID, clientSecret string) *OAuth2Config[FacebookProfile] {
	c := oauthBuiltIn("facebook", "Facebook", "https://www.facebook.com/v19.0/dialog/oauth", "email",
		"https://graph.facebook.com/oauth/access_token", "https://graph.facebook.com/me", clientID, clientSecret, FacebookUser, "#0866ff")
	c.Userinfo.Params = params("fields", "id,name,email,picture")
	c.Checks = Checks{CheckPKCE, CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// FacebookUser maps a Facebook profile: id, email, name,
// picture.data.url.
func FacebookUser(_ context.Context, p FacebookProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Email, Name: str(p.Name), Image: str(p.Picture.Data.URL)}, nil
}

// FACEITProfile is the FACEIT userinfo response.
type FACEITProfile struct {
	GUID     string `json:"guid"`
	Nickname string `json:"nickname"`
	Name     string `json:"name"`
	Email    string `json:"email"`
	Picture  string `json:"picture"`
	Locale   string `json:"locale"`
}

// FACEIT returns the FACEIT Connect OAuth 2.0 provider (id "faceit"),
// authenticating with client_secret_basic.
func FACEIT(clientID, clientSecret string) *OAuth2Config[FACEITProfile] {
	c := oauthBuiltIn("faceit", "FACEIT", "https://accounts.faceit.com/accounts", "openid email profile",
		"https://api.faceit.com/auth/v1/oauth/token", "https://api.faceit.com/auth/v1/resources/userinfo", clientID, clientSecret, FACEITUser, "#ff5500")
	c.Authorization.Params.Set("redirect_popup", "true")
	c.Checks = Checks{CheckPKCE, CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_basic"}
	return c
}

// FACEITUser maps a FACEIT profile: guid, email, name (else nickname),
// picture.
func FACEITUser(_ context.Context, p FACEITProfile, _ TokenSet) (User, error) {
	return User{ID: p.GUID, Email: p.Email, Name: str(first(p.Name, p.Nickname)), Image: str(p.Picture)}, nil
}

// FigmaProfile is the Figma user (GET /v1/me).
type FigmaProfile struct {
	ID     string `json:"id"`
	Email  string `json:"email"`
	Handle string `json:"handle"`
	ImgURL string `json:"img_url"`
}

// Figma returns the Figma OAuth 2.0 provider (id "figma"), asking for
// current_user:read, with the state check, authenticating with
// client_secret_basic.
func Figma(clientID, clientSecret string) *OAuth2Config[FigmaProfile] {
	c := oauthBuiltIn("figma", "Figma", "https://www.figma.com/oauth", "current_user:read",
		"https://api.figma.com/v1/oauth/token", "https://api.figma.com/v1/me", clientID, clientSecret, FigmaUser, "#0d99ff")
	c.Checks = Checks{CheckState}
	return c
}

// FigmaUser maps a Figma profile: id, email, handle, img_url.
func FigmaUser(_ context.Context, p FigmaProfile, _ TokenSet) (User, error) {
	return User{ID: p.ID, Email: p.Email, Name: str(p.Handle), Image: str(p.ImgURL)}, nil
}

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

// Foursquare returns the Foursquare OAuth 2.0 provider (id "foursquare")
// with the state check. Foursquare's v2 API takes the token as the
// oauth_token query parameter and a version date as v.
func Foursquare(clientID, clientSecret string) *OAuth2Config[FoursquareProfile] {
	c := oauthBuiltIn("foursquare", "Foursquare", "https://foursquare.com/oauth2/authenticate", "",
		"https://foursquare.com/oauth2/access_token", "https://api.foursquare.com/v2/users/self", clientID, clientSecret, FoursquareUser, "#f94877")
	c.Userinfo.Params = params("v", "20230131")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (FoursquareProfile, error) {
		var p FoursquareProfile
		err := fetchJSON(ctx, req.client(), userinfoCall{url: withQuery(req.Endpoint.WithParams(), "oauth_token", req.Tokens.AccessToken)}, &p)
		return p, err
	}
	return c
}

// FoursquareUser maps a Foursquare profile: id, contact.email, first and
// last name, the original-size photo (prefix + "original" + suffix).
func FoursquareUser(_ context.Context, p FoursquareProfile, _ TokenSet) (User, error) {
	u := p.Response.User
	out := User{ID: u.ID, Email: u.Contact.Email, Name: str(joinNonEmpty(u.FirstName, u.LastName))}
	if u.Photo.Prefix != "" {
		out.Image = str(u.Photo.Prefix + "original" + u.Photo.Suffix)
	}
	return out, nil
}

// FreshbooksProfile is the FreshBooks identity (GET /auth/api/v1/users/me).
type FreshbooksProfile struct {
	Response struct {
		ID        int64  `json:"id"`
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
		Email     string `json:"email"`
	} `json:"response"`
}

// Freshbooks returns the FreshBooks OAuth 2.0 provider (id "freshbooks")
// with the state check.
func Freshbooks(clientID, clientSecret string) *OAuth2Config[FreshbooksProfile] {
	c := oauthBuiltIn("freshbooks", "FreshBooks", "https://auth.freshbooks.com/service/auth/oauth/authorize", "user:profile:read",
		"https://api.freshbooks.com/auth/oauth/token", "https://api.freshbooks.com/auth/api/v1/users/me", clientID, clientSecret, FreshbooksUser, "#0075dd")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// FreshbooksUser maps a FreshBooks identity: response.id, email, first and
// last name; no picture.
func FreshbooksUser(_ context.Context, p FreshbooksProfile, _ TokenSet) (User, error) {
	r := p.Response
	return User{ID: itoa(r.ID), Email: r.Email, Name: str(joinNonEmpty(r.FirstName, r.LastName))}, nil
}

// HubSpotProfile is HubSpot's access token metadata (GET
// /oauth/v1/access-tokens/{token}), the only user profile HubSpot's OAuth
// exposes.
type HubSpotProfile struct {
	User      string   `json:"user"`
	UserID    int64    `json:"user_id"`
	HubID     int64    `json:"hub_id"`
	HubDomain string   `json:"hub_domain"`
	AppID     int64    `json:"app_id"`
	Scopes    []string `json:"scopes"`
	TokenType string   `json:"token_type"`
}

// HubSpot returns the HubSpot OAuth 2.0 provider (id "hubspot"), asking
// for oauth, with the state check, authenticating with
// client_secret_post. HubSpot's profile is the token's metadata: the
// access token goes in the URL path, not in a header.
func HubSpot(clientID, clientSecret string) *OAuth2Config[HubSpotProfile] {
	c := oauthBuiltIn("hubspot", "HubSpot", "https://app.hubspot.com/oauth/authorize", "oauth",
		"https://api.hubapi.com/oauth/v1/token", "https://api.hubapi.com/oauth/v1/access-tokens", clientID, clientSecret, HubSpotUser, "#ff7a59")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	c.Userinfo.Request = func(ctx context.Context, req UserinfoRequest) (HubSpotProfile, error) {
		var p HubSpotProfile
		u := strings.TrimSuffix(req.Endpoint.URL, "/") + "/" + url.PathEscape(req.Tokens.AccessToken)
		err := fetchJSON(ctx, req.client(), userinfoCall{url: u}, &p)
		return p, redactToken(err, req.Tokens.AccessToken)
	}
	return c
}

// redactToken replaces token in err's message, for errors about a URL
// that carries it in its path.
func redactToken(err error, token string) error {
	if err == nil || token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), token, "[token]"), err: err}
}

// HubSpotUser maps HubSpot token metadata: user_id, user (the e-mail
// address, also the name); no picture.
func HubSpotUser(_ context.Context, p HubSpotProfile, _ TokenSet) (User, error) {
	return User{ID: itoa(p.UserID), Email: p.User, Name: str(p.User)}, nil
}

// InstagramProfile is the Instagram user (GET graph.instagram.com/me).
type InstagramProfile struct {
	ID                string `json:"id"`
	UserID            string `json:"user_id"`
	Username          string `json:"username"`
	Name              string `json:"name"`
	AccountType       string `json:"account_type"`
	ProfilePictureURL string `json:"profile_picture_url"`
}

// Instagram returns the Instagram API with Instagram Login provider (id
// "instagram"), asking for instagram_business_basic, with the state
// check, authenticating with client_secret_post. Instagram gives no
// e-mail address.
func Instagram(clientID, clientSecret string) *OAuth2Config[InstagramProfile] {
	c := oauthBuiltIn("instagram", "Instagram", "https://www.instagram.com/oauth/authorize", "instagram_business_basic",
		"https://api.instagram.com/oauth/access_token", "https://graph.instagram.com/me", clientID, clientSecret, InstagramUser, "#E1306C")
	c.Userinfo.Params = params("fields", "id,user_id,username,name,account_type,profile_picture_url")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// InstagramUser maps an Instagram profile: id, name (else username),
// profile_picture_url.
func InstagramUser(_ context.Context, p InstagramProfile, _ TokenSet) (User, error) {
	return User{ID: first(p.ID, p.UserID), Name: str(first(p.Name, p.Username)), Image: str(p.ProfilePictureURL)}, nil
}

// KakaoProfile is the Kakao user (GET /v2/user/me).
type KakaoProfile struct {
	ID           int64 `json:"id"`
	KakaoAccount struct {
		Profile struct {
			Nickname        string `json:"nickname"`
			ProfileImageURL string `json:"profile_image_url"`
			ThumbnailURL    string `json:"thumbnail_image_url"`
		} `json:"profile"`
		Email           string `json:"email"`
		IsEmailValid    bool   `json:"is_email_valid"`
		IsEmailVerified bool   `json:"is_email_verified"`
		Name            string `json:"name"`
	} `json:"kakao_account"`
}

// Kakao returns the Kakao Login OAuth 2.0 provider (id "kakao") with the
// state check, authenticating with client_secret_post.
func Kakao(clientID, clientSecret string) *OAuth2Config[KakaoProfile] {
	c := oauthBuiltIn("kakao", "Kakao", "https://kauth.kakao.com/oauth/authorize", "",
		"https://kauth.kakao.com/oauth/token", "https://kapi.kakao.com/v2/user/me", clientID, clientSecret, KakaoUser, "#FEE500")
	c.Checks = Checks{CheckState}
	c.Client = ClientOptions{TokenEndpointAuthMethod: "client_secret_post"}
	return c
}

// KakaoUser maps a Kakao profile: id, kakao_account.email, the profile's
// nickname (else the account name), profile_image_url.
func KakaoUser(_ context.Context, p KakaoProfile, _ TokenSet) (User, error) {
	a := p.KakaoAccount
	return User{ID: itoa(p.ID), Email: a.Email, Name: str(first(a.Profile.Nickname, a.Name)), Image: str(a.Profile.ProfileImageURL)}, nil
}
