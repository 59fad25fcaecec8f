package providers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// The Mailgun regions.
const (
	// MailgunUS is api.mailgun.net, the default.
	MailgunUS MailgunRegion = "us"
	// MailgunEU is api.eu.mailgun.net.
	MailgunEU MailgunRegion = "eu"
)

// MailgunRegion is the region of a Mailgun account, which decides the API
// host.
type MailgunRegion string

// Mailgun returns an e-mail provider (id "mailgun") that sends the sign-in
// link through Mailgun's API: POST https://api.mailgun.net/v3/DOMAIN/messages
// (api.eu.mailgun.net for [MailgunEU]) with HTTP basic authentication
// ("api" and apiKey) and a form body. domain is the sending domain
// configured in Mailgun; region "" means [MailgunUS].
func Mailgun(apiKey, domain string, region MailgunRegion, from string, opts ...EmailServiceOption) *provider.EmailConfig {
	return newEmailService("mailgun", "Mailgun", apiKey, from, opts, func(s *emailService, from, to string, m provider.EmailMessage) (*http.Request, error) {
		host := ""
		switch region {
		case "", MailgunUS:
			host = "api.mailgun.net"
		case MailgunEU:
			host = "api.eu.mailgun.net"
		default:
			return nil, fmt.Errorf("%w: mailgun: unknown region %q (use %q or %q)", core.ErrInvalidConfig, region, MailgunUS, MailgunEU)
		}
		d := strings.TrimSpace(domain)
		if d == "" || strings.ContainsAny(d, "/?#@ ") {
			return nil, fmt.Errorf("%w: mailgun: sending domain %q is empty or not a domain (pass the domain set up in Mailgun, e.g. mg.example.com)", core.ErrInvalidConfig, domain)
		}
		form := url.Values{"from": {from}, "to": {to}, "subject": {m.Subject}, "text": {m.Text}, "html": {m.HTML}}
		return postRequest("https://"+host+"/v3/"+url.PathEscape(d)+"/messages", basicAuth("api", s.apiKey),
			"application/x-www-form-urlencoded", []byte(form.Encode()))
	})
}
