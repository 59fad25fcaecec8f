package providers

import (
	"net/http"

	"github.com/authport/authport/core/provider"
)

// ForwardEmail returns an e-mail provider (id "forwardemail") that sends
// the sign-in link through Forward Email's API: POST
// https://api.forwardemail.net/v1/emails with HTTP basic authentication
// (the API key as the user name, no password) and a JSON body.
func ForwardEmail(apiKey, from string, opts ...EmailServiceOption) *provider.EmailConfig {
	return newEmailService("forwardemail", "Forward Email", apiKey, from, opts, func(s *emailService, from, to string, m provider.EmailMessage) (*http.Request, error) {
		return jsonRequest("https://api.forwardemail.net/v1/emails", basicAuth(s.apiKey, ""), map[string]any{
			"from": from, "to": to, "subject": m.Subject, "text": m.Text, "html": m.HTML,
		})
	})
}
