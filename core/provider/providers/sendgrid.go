package providers

import (
	"fmt"
	"net/http"
	"net/mail"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// SendGrid returns an e-mail provider (id "sendgrid") that sends the
// sign-in link through SendGrid's v3 Mail Send API: POST
// https://api.sendgrid.com/v3/mail/send with "Authorization: Bearer apiKey"
// and a JSON body.
func SendGrid(apiKey, from string, opts ...EmailServiceOption) *provider.EmailConfig {
	return newEmailService("sendgrid", "SendGrid", apiKey, from, opts, func(s *emailService, from, to string, m provider.EmailMessage) (*http.Request, error) {
		addr, err := mail.ParseAddress(from)
		if err != nil {
			return nil, fmt.Errorf("%w: sendgrid: From %q is not an e-mail address", core.ErrInvalidConfig, from)
		}
		sender := map[string]string{"email": addr.Address}
		if addr.Name != "" {
			sender["name"] = addr.Name
		}
		return jsonRequest("https://api.sendgrid.com/v3/mail/send", bearerAuth(s.apiKey), map[string]any{
			"personalizations": []any{map[string]any{"to": []any{map[string]string{"email": to}}}},
			"from":             sender,
			"subject":          m.Subject,
			"content": []any{
				map[string]string{"type": "text/plain", "value": m.Text},
				map[string]string{"type": "text/html", "value": m.HTML},
			},
		})
	})
}
