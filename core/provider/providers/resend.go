package providers

import (
	"net/http"

	"github.com/authport/authport/core/provider"
)

// Resend returns an e-mail provider (id "resend") that sends the sign-in
// link through Resend's API: POST https://api.resend.com/emails with
// "Authorization: Bearer apiKey" and a JSON body.
func Resend(apiKey, from string, opts ...EmailServiceOption) *provider.EmailConfig {
	return newEmailService("resend", "Resend", apiKey, from, opts, func(s *emailService, from, to string, m provider.EmailMessage) (*http.Request, error) {
		return jsonRequest("https://api.resend.com/emails", bearerAuth(s.apiKey), map[string]any{
			"from": from, "to": []string{to}, "subject": m.Subject, "text": m.Text, "html": m.HTML,
		})
	})
}
