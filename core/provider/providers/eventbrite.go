package providers

import (
	"context"
	"net/url"

	"github.com/authport/authport/core/provider"
)

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

// EventbriteUser maps an Eventbrite user: id, the primary address of
// emails, name (else first and last name), and the image on Eventbrite's
// image service when image_id is set.
func EventbriteUser(_ context.Context, p EventbriteProfile, _ provider.TokenSet) (provider.User, error) {
	u := provider.User{ID: p.ID, Name: str(first(p.Name, joinNonEmpty(p.FirstName, p.LastName)))}
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

// Eventbrite returns the Eventbrite OAuth 2.0 provider (id "eventbrite"),
// asking for user.profile, with the state check, authenticating with
// client_secret_post.
func Eventbrite(clientID, clientSecret string) *provider.OAuth2Config[EventbriteProfile] {
	return oauthBuiltIn("eventbrite", "Eventbrite", "#f05537", "state post", clientID, clientSecret, EventbriteUser,
		"https://www.eventbrite.com/oauth/authorize", "user.profile", "https://www.eventbrite.com/oauth/token", "https://www.eventbriteapi.com/v3/users/me/")
}
