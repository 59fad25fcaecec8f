package provider

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
)

// GoogleProfile is the claims of a Google ID token.
type GoogleProfile struct {
	Iss           string `json:"iss"`
	Azp           string `json:"azp"`
	Sub           string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	HD            string `json:"hd,omitempty"`
	Name          string `json:"name"`
	GivenName     string `json:"given_name"`
	FamilyName    string `json:"family_name,omitempty"`
	Picture       string `json:"picture"`
	Locale        string `json:"locale,omitempty"`
	Iat           int64  `json:"iat"`
	Exp           int64  `json:"exp"`
}

// Google returns the Google OpenID Connect provider (id "google", issuer
// https://accounts.google.com).
func Google(clientID, clientSecret string) *OIDCConfig[GoogleProfile] {
	return &OIDCConfig[GoogleProfile]{
		ID:           "google",
		Name:         "Google",
		Issuer:       "https://accounts.google.com",
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Profile:      GoogleUser,
		Style:        ButtonStyle{Logo: "/google.svg", BrandColor: "#1a73e8"},
	}
}

// GoogleUser is the Google profile mapping: sub, email, name, picture.
func GoogleUser(_ context.Context, p GoogleProfile, _ TokenSet) (User, error) {
	return User{ID: p.Sub, Email: p.Email, Name: str(p.Name), Image: str(p.Picture)}, nil
}

// MicrosoftEntraIDProfile is the claims of a Microsoft Entra ID (v2.0) ID
// token.
type MicrosoftEntraIDProfile struct {
	Sub               string `json:"sub"`
	OID               string `json:"oid"`
	TID               string `json:"tid"`
	Name              string `json:"name"`
	GivenName         string `json:"given_name,omitempty"`
	FamilyName        string `json:"family_name,omitempty"`
	Email             string `json:"email"`
	PreferredUsername string `json:"preferred_username"`
	Picture           string `json:"picture,omitempty"`
}

// MicrosoftEntraID returns the Microsoft Entra ID OpenID Connect provider
// (id "microsoft-entra-id"), asking for openid, profile, email and
// User.Read. The issuer is https://login.microsoftonline.com/{tenant}/v2.0;
// tenant is a tenant id or domain, or "common" (the default when empty:
// any work, school or personal account), "organizations" or "consumers".
// A full issuer URL is accepted too.
//
// The multi-tenant discovery documents name the issuer with a {tenantid}
// placeholder, and the ID token's iss carries the user's tenant: the
// sign-in code must compare issuers accordingly.
func MicrosoftEntraID(clientID, clientSecret, tenant string) *OIDCConfig[MicrosoftEntraIDProfile] {
	issuer := strings.TrimSpace(tenant)
	if !strings.Contains(issuer, "://") {
		if issuer == "" {
			issuer = "common"
		}
		issuer = "https://login.microsoftonline.com/" + url.PathEscape(issuer) + "/v2.0"
	}
	return &OIDCConfig[MicrosoftEntraIDProfile]{
		ID:            "microsoft-entra-id",
		Name:          "Microsoft Entra ID",
		Issuer:        issuer,
		Authorization: Endpoint{Params: params("scope", "openid profile email User.Read")},
		ClientID:      clientID,
		ClientSecret:  clientSecret,
		Profile:       MicrosoftEntraIDUser,
		Style:         ButtonStyle{Logo: "/microsoft-entra-id.svg", BrandColor: "#0072c6"},
	}
}

// MicrosoftEntraIDUser is the Microsoft Entra ID profile mapping: sub,
// email, name, picture (the ID token has no picture unless one was added;
// the photo is behind Microsoft Graph).
func MicrosoftEntraIDUser(_ context.Context, p MicrosoftEntraIDProfile, _ TokenSet) (User, error) {
	return User{ID: p.Sub, Email: p.Email, Name: str(p.Name), Image: str(p.Picture)}, nil
}

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

// Apple returns the Sign in with Apple OpenID Connect provider (id
// "apple", issuer https://appleid.apple.com), asking for name and email
// with response_mode form_post, and authenticating with
// client_secret_post. clientSecret is the JWT Apple requires, signed with
// the team's key; it expires (at most six months) and must be renewed.
func Apple(clientID, clientSecret string) *OIDCConfig[AppleProfile] {
	return &OIDCConfig[AppleProfile]{
		ID:            "apple",
		Name:          "Apple",
		Issuer:        "https://appleid.apple.com",
		Authorization: Endpoint{Params: params("scope", "name email", "response_mode", "form_post")},
		Client:        ClientOptions{TokenEndpointAuthMethod: "client_secret_post"},
		ClientID:      clientID,
		ClientSecret:  clientSecret,
		Profile:       AppleUser,
		Style:         ButtonStyle{Logo: "/apple.svg", BrandColor: "#000000"},
	}
}

// AppleUser is the Apple profile mapping: sub, email, and the name
// from the first sign-in's user object; Apple has no picture.
func AppleUser(_ context.Context, p AppleProfile, _ TokenSet) (User, error) {
	u := User{ID: p.Sub, Email: p.Email}
	if p.User != nil {
		name := strings.TrimSpace(p.User.Name.FirstName + " " + p.User.Name.LastName)
		u.Name = str(name)
		if u.Email == "" {
			u.Email = p.User.Email
		}
	}
	return u, nil
}

// Auth0Profile is the Auth0 user profile (ID token claims or /userinfo).
type Auth0Profile struct {
	Sub           string `json:"sub"`
	Name          string `json:"name"`
	Nickname      string `json:"nickname"`
	GivenName     string `json:"given_name,omitempty"`
	FamilyName    string `json:"family_name,omitempty"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	Picture       string `json:"picture"`
	UpdatedAt     string `json:"updated_at,omitempty"`
}

// Auth0 returns the Auth0 OpenID Connect provider (id "auth0") for the
// tenant at domain: a domain such as "example.eu.auth0.com" (the issuer is
// then https://example.eu.auth0.com/, with Auth0's trailing slash) or the
// issuer URL itself.
func Auth0(clientID, clientSecret, domain string) *OIDCConfig[Auth0Profile] {
	issuer := issuerURL(domain)
	if u, err := url.Parse(issuer); err == nil && u.Host != "" && u.Path == "" {
		issuer += "/"
	}
	return &OIDCConfig[Auth0Profile]{
		ID:           "auth0",
		Name:         "Auth0",
		Issuer:       issuer,
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Profile:      Auth0User,
		Style:        ButtonStyle{Logo: "/auth0.svg", BrandColor: "#EB5424"},
	}
}

// Auth0User is the Auth0 profile mapping: sub, email, name (else
// nickname), picture.
func Auth0User(_ context.Context, p Auth0Profile, _ TokenSet) (User, error) {
	return User{ID: p.Sub, Email: p.Email, Name: str(first(p.Name, p.Nickname)), Image: str(p.Picture)}, nil
}

// KeycloakProfile is the Keycloak ID token claims the Keycloak provider
// reads.
type KeycloakProfile struct {
	Sub               string `json:"sub"`
	Name              string `json:"name"`
	PreferredUsername string `json:"preferred_username"`
	GivenName         string `json:"given_name"`
	FamilyName        string `json:"family_name"`
	Email             string `json:"email"`
	EmailVerified     bool   `json:"email_verified"`
	Picture           string `json:"picture,omitempty"`
	SessionState      string `json:"session_state,omitempty"`
}

// Keycloak returns the Keycloak OpenID Connect provider (id "keycloak").
// issuer is the realm's URL, e.g. https://auth.example.com/realms/myrealm.
func Keycloak(clientID, clientSecret, issuer string) *OIDCConfig[KeycloakProfile] {
	return &OIDCConfig[KeycloakProfile]{
		ID:           "keycloak",
		Name:         "Keycloak",
		Issuer:       issuerURL(issuer),
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Profile:      KeycloakUser,
		Style:        ButtonStyle{Logo: "/keycloak.svg", BrandColor: "#428bca"},
	}
}

// KeycloakUser is the Keycloak profile mapping: sub, email, name (else
// preferred_username), picture.
func KeycloakUser(_ context.Context, p KeycloakProfile, _ TokenSet) (User, error) {
	return User{ID: p.Sub, Email: p.Email, Name: str(first(p.Name, p.PreferredUsername)), Image: str(p.Picture)}, nil
}

// OktaProfile is the Okta ID token claims the Okta provider reads.
type OktaProfile struct {
	Sub               string `json:"sub"`
	Name              string `json:"name"`
	Nickname          string `json:"nickname,omitempty"`
	PreferredUsername string `json:"preferred_username"`
	GivenName         string `json:"given_name,omitempty"`
	MiddleName        string `json:"middle_name,omitempty"`
	FamilyName        string `json:"family_name,omitempty"`
	Email             string `json:"email"`
	EmailVerified     bool   `json:"email_verified"`
	Picture           string `json:"picture,omitempty"`
	Locale            string `json:"locale,omitempty"`
	Zoneinfo          string `json:"zoneinfo,omitempty"`
}

// Okta returns the Okta OpenID Connect provider (id "okta") with the pkce
// and state checks. issuer is the org or authorization server URL, e.g.
// https://dev-123456.okta.com/oauth2/default; a bare domain is taken as
// https://{domain}.
func Okta(clientID, clientSecret, issuer string) *OIDCConfig[OktaProfile] {
	return &OIDCConfig[OktaProfile]{
		ID:           "okta",
		Name:         "Okta",
		Issuer:       issuerURL(issuer),
		Checks:       Checks{CheckPKCE, CheckState},
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Profile:      OktaUser,
		Style:        ButtonStyle{Logo: "/okta.svg", BrandColor: "#000000"},
	}
}

// OktaUser is the Okta profile mapping: sub, email, name (else nickname,
// else preferred_username), picture.
func OktaUser(_ context.Context, p OktaProfile, _ TokenSet) (User, error) {
	return User{ID: p.Sub, Email: p.Email, Name: str(first(p.Name, p.Nickname, p.PreferredUsername)), Image: str(p.Picture)}, nil
}

// SlackProfile is the claims of a Sign in with Slack (OpenID Connect) ID
// token.
type SlackProfile struct {
	Sub           string `json:"sub"`
	UserID        string `json:"https://slack.com/user_id"`
	TeamID        string `json:"https://slack.com/team_id"`
	TeamName      string `json:"https://slack.com/team_name,omitempty"`
	TeamDomain    string `json:"https://slack.com/team_domain,omitempty"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	Name          string `json:"name"`
	GivenName     string `json:"given_name,omitempty"`
	FamilyName    string `json:"family_name,omitempty"`
	Picture       string `json:"picture"`
	UserImage512  string `json:"https://slack.com/user_image_512,omitempty"`
	Locale        string `json:"locale,omitempty"`
}

// Slack returns the Sign in with Slack OpenID Connect provider (id
// "slack", issuer https://slack.com) with the nonce check.
func Slack(clientID, clientSecret string) *OIDCConfig[SlackProfile] {
	return &OIDCConfig[SlackProfile]{
		ID:           "slack",
		Name:         "Slack",
		Issuer:       "https://slack.com",
		Checks:       Checks{CheckNonce},
		ClientID:     clientID,
		ClientSecret: clientSecret,
		Profile:      SlackUser,
		Style:        ButtonStyle{Logo: "/slack.svg", BrandColor: "#611f69"},
	}
}

// SlackUser is the Slack profile mapping: sub (else the Slack user id),
// email, name, picture (else the 512px user image).
func SlackUser(_ context.Context, p SlackProfile, _ TokenSet) (User, error) {
	return User{ID: first(p.Sub, p.UserID), Email: p.Email, Name: str(p.Name), Image: str(first(p.Picture, p.UserImage512))}, nil
}

// TwitchProfile is the claims of a Twitch ID token, as the Twitch provider
// requests them.
type TwitchProfile struct {
	Sub               string `json:"sub"`
	PreferredUsername string `json:"preferred_username"`
	Email             string `json:"email"`
	EmailVerified     bool   `json:"email_verified,omitempty"`
	Picture           string `json:"picture"`
}

// Twitch returns the Twitch OpenID Connect provider (id "twitch", issuer
// https://id.twitch.tv/oauth2), asking for openid and user:read:email and
// for the email, picture and preferred_username claims in the ID token,
// and authenticating with client_secret_post. Twitch returns scope as a
// list; [TokenSet] joins it.
func Twitch(clientID, clientSecret string) *OIDCConfig[TwitchProfile] {
	claims := `{"id_token":{"email":null,"picture":null,"preferred_username":null}}`
	return &OIDCConfig[TwitchProfile]{
		ID:            "twitch",
		Name:          "Twitch",
		Issuer:        "https://id.twitch.tv/oauth2",
		Authorization: Endpoint{Params: params("scope", "openid user:read:email", "claims", claims)},
		Client:        ClientOptions{TokenEndpointAuthMethod: "client_secret_post"},
		ClientID:      clientID,
		ClientSecret:  clientSecret,
		Profile:       TwitchUser,
		Style:         ButtonStyle{Logo: "/twitch.svg", BrandColor: "#65459B"},
	}
}

// TwitchUser is the Twitch profile mapping: sub, email,
// preferred_username, picture.
func TwitchUser(_ context.Context, p TwitchProfile, _ TokenSet) (User, error) {
	return User{ID: p.Sub, Email: p.Email, Name: str(p.PreferredUsername), Image: str(p.Picture)}, nil
}

// LinkedInProfile is the claims of a Sign In with LinkedIn (OpenID
// Connect) ID token.
type LinkedInProfile struct {
	Sub           string `json:"sub"`
	Name          string `json:"name"`
	GivenName     string `json:"given_name"`
	FamilyName    string `json:"family_name"`
	Picture       string `json:"picture"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	// Locale is a string or an object {country, language}.
	Locale json.RawMessage `json:"locale,omitempty"`
}

// LinkedIn returns the Sign In with LinkedIn OpenID Connect provider (id
// "linkedin", issuer https://www.linkedin.com/oauth), asking for openid,
// profile and email, and authenticating with client_secret_post.
func LinkedIn(clientID, clientSecret string) *OIDCConfig[LinkedInProfile] {
	return &OIDCConfig[LinkedInProfile]{
		ID:            "linkedin",
		Name:          "LinkedIn",
		Issuer:        "https://www.linkedin.com/oauth",
		WellKnown:     "https://www.linkedin.com/oauth/.well-known/openid-configuration",
		JWKSEndpoint:  "https://www.linkedin.com/oauth/openid/jwks",
		Authorization: Endpoint{Params: params("scope", "openid profile email")},
		Client:        ClientOptions{TokenEndpointAuthMethod: "client_secret_post"},
		ClientID:      clientID,
		ClientSecret:  clientSecret,
		Profile:       LinkedInUser,
		Style:         ButtonStyle{Logo: "/linkedin.svg", BrandColor: "#069"},
	}
}

// LinkedInUser is the LinkedIn profile mapping: sub, email, name, picture.
func LinkedInUser(_ context.Context, p LinkedInProfile, _ TokenSet) (User, error) {
	return User{ID: p.Sub, Email: p.Email, Name: str(p.Name), Image: str(p.Picture)}, nil
}

func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
