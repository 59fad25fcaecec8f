package provider

import (
	"errors"
	"html"
	"net/url"
)

// ErrEmailDelivery is returned, wrapped, when an e-mail delivery service
// could not be reached or refused to send a sign-in e-mail. A refusal is a
// providers.EmailServiceError (package core/provider/providers) carrying the
// HTTP status and the service's message.
var ErrEmailDelivery = errors.New("e-mail delivery failed")

// EmailMessage is the content of a sign-in e-mail.
type EmailMessage struct {
	// Subject is the e-mail's subject line.
	Subject string
	// Text is the plain-text body.
	Text string
	// HTML is the HTML body.
	HTML string
}

// VerificationEmail returns the default sign-in e-mail for req, in the
// shape Auth.js sends: the subject "Sign in to HOST" (HOST taken from the
// link), a plain-text body with the link on a line of its own, and an
// HTML body with a "Sign in" button linking to it (the link HTML-escaped).
func VerificationEmail(req VerificationRequest) EmailMessage {
	host := "your account"
	if u, err := url.Parse(req.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	escURL, escHost := html.EscapeString(req.URL), html.EscapeString(host)
	return EmailMessage{
		Subject: "Sign in to " + host,
		Text: "Sign in to " + host + "\n" + req.URL + "\n\n" +
			"If you did not request this e-mail you can safely ignore it.\n",
		HTML: `<!DOCTYPE html>
<html><body style="font-family: Helvetica, Arial, sans-serif; background: #f9f9f9; padding: 20px;">
<table width="100%" border="0" cellspacing="0" cellpadding="0" style="max-width: 600px; margin: auto; background: #ffffff; border-radius: 10px; padding: 20px;">
<tr><td align="center" style="font-size: 22px; color: #444444; padding: 10px 0;">Sign in to <strong>` + escHost + `</strong></td></tr>
<tr><td align="center" style="padding: 20px 0;"><a href="` + escURL + `" target="_blank" style="font-size: 18px; color: #ffffff; background: #346df1; text-decoration: none; border-radius: 5px; padding: 10px 20px; display: inline-block; font-weight: bold;">Sign in</a></td></tr>
<tr><td align="center" style="font-size: 16px; color: #444444; padding: 0 0 10px 0;">If you did not request this e-mail you can safely ignore it.</td></tr>
</table>
</body></html>
`,
	}
}
