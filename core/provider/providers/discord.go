package providers

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/authport/authport/core/provider"
)

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

// DiscordUser is the Discord profile mapping: id, global_name (else
// username), email, and the avatar URL built from the id and avatar hash
// (animated hashes, prefixed a_, give a GIF), or Discord's default avatar
// when there is no hash.
func DiscordUser(_ context.Context, p DiscordProfile, _ provider.TokenSet) (provider.User, error) {
	u := provider.User{ID: p.ID, Name: str(p.Username), Image: str(DiscordAvatarURL(p))}
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

// Discord returns the Discord OAuth 2.0 provider (id "discord"), asking
// for identify and email.
func Discord(clientID, clientSecret string) *provider.OAuth2Config[DiscordProfile] {
	return oauthBuiltIn("discord", "Discord", "#5865F2", "", clientID, clientSecret, DiscordUser,
		"https://discord.com/api/oauth2/authorize", "identify email", "https://discord.com/api/oauth2/token", "https://discord.com/api/users/@me")
}
