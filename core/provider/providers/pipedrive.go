package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// PipedriveProfile is the Pipedrive user (GET /v1/users/me).
type PipedriveProfile struct {
	Success bool                 `json:"success"`
	Data    PipedriveProfileData `json:"data"`
}

// PipedriveProfileData is the Data member of [PipedriveProfile].
type PipedriveProfileData struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Email       string `json:"email"`
	IconURL     string `json:"icon_url"`
	CompanyID   int64  `json:"company_id"`
	CompanyName string `json:"company_name"`
	Locale      string `json:"locale"`
}

// PipedriveUser maps a Pipedrive user: data.id, email, name, icon_url.
func PipedriveUser(_ context.Context, p PipedriveProfile, _ provider.TokenSet) (provider.User, error) {
	return provider.User{ID: itoa(p.Data.ID), Email: p.Data.Email, Name: str(p.Data.Name), Image: str(p.Data.IconURL)}, nil
}

// Pipedrive returns the Pipedrive OAuth 2.0 provider (id "pipedrive")
// with the state check.
func Pipedrive(clientID, clientSecret string) *provider.OAuth2Config[PipedriveProfile] {
	return oauthBuiltIn("pipedrive", "Pipedrive", "#017737", "state", clientID, clientSecret, PipedriveUser,
		"https://oauth.pipedrive.com/oauth/authorize", "", "https://oauth.pipedrive.com/oauth/token", "https://api.pipedrive.com/v1/users/me")
}
