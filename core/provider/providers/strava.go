package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

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

// StravaUser maps a Strava athlete: id, first and last name, profile (the
// large picture).
func StravaUser(_ context.Context, p StravaProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.ID), Name: str(first(joinNonEmpty(p.Firstname, p.Lastname), p.Username)), Image: str(first(p.Profile, p.ProfileMedium))}, nil
}

// Strava returns the Strava OAuth 2.0 provider (id "strava"), asking for
// read with approval_prompt auto, with the state check, authenticating
// with client_secret_post. Strava gives no e-mail address.
func Strava(clientID, clientSecret string) *provider.OAuth2Config[StravaProfile] {
	c := oauthBuiltIn("strava", "Strava", "#fc4c02", "state post", clientID, clientSecret, StravaUser,
		"https://www.strava.com/oauth/authorize", "read", "https://www.strava.com/oauth/token", "https://www.strava.com/api/v3/athlete")
	c.Authorization.Params.Set("approval_prompt", "auto")
	return c
}
