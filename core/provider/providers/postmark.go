package providers

import (
	"net/http"

	"github.com/authport/authport/core/provider"
)

// Postmark returns an e-mail provider (id "postmark") that sends the
// sign-in link through Postmark's API: POST https://api.postmarkapp.com/email
// with the server token in the "X-Postmark-Server-Token" header and a JSON
// body, on the "outbound" message stream.
func Postmark(serverToken, from string, opts ...EmailServiceOption) *provider.EmailConfig {
	return newEmailService("postmark", "Postmark", serverToken, from, opts, func(s *emailService, from, to string, m provider.EmailMessage) (*http.Request, error) {
		return jsonRequest("https://api.postmarkapp.com/email", headerAuth("X-Postmark-Server-Token", s.apiKey), map[string]any{
			"From": from, "To": to, "Subject": m.Subject, "TextBody": m.Text, "HtmlBody": m.HTML,
			"MessageStream": "outbound",
		})
	})
}
