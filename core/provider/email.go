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
// Password e-mails ([VerificationRequest.Purpose]) get their own subject
// and button, and a one-time code ([VerificationRequest.Code]) is shown
// beside the link.
func VerificationEmail(req VerificationRequest) EmailMessage {
	host := "your account"
	if u, err := url.Parse(req.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	title, button, ignore := "Sign in to "+host, "Sign in", "If you did not request this e-mail you can safely ignore it."
	switch req.Purpose {
	case PurposeVerifyEmail:
		title, button = "Confirm your e-mail address for "+host, "Confirm"
	case PurposeResetPassword:
		title, button = "Reset your password for "+host, "Reset password"
		ignore = "If you did not ask to reset your password you can safely ignore this e-mail; your password has not changed."
	case PurposeSecondFactor:
		title, button = "Your sign-in code for "+host, "Open "+host
		ignore = "If you are not signing in right now, someone knows your password or used your sign-in link: change your password."
	case PurposeAccountExists:
		title, button = "Someone tried to sign up to "+host+" with your address", "Sign in"
		ignore = "Your address already has an account. If it was you, sign in, or reset your password if you forgot it; otherwise you can ignore this e-mail."
	}
	text := title + "\n" + req.URL + "\n\n"
	codeHTML := ""
	if req.Code != "" {
		intro := "Or enter this code in the browser where you asked for it: "
		if req.Purpose == PurposeSecondFactor {
			intro = "Enter this code in the browser where you are signing in: "
		}
		text += intro + req.Code + "\n\n"
		codeHTML = `<tr><td align="center" style="font-size: 16px; color: #444444; padding: 0 0 10px 0;">` + html.EscapeString(intro) + `<strong style="font-size: 22px; letter-spacing: 4px;">` +
			html.EscapeString(req.Code) + `</strong></td></tr>
`
	}
	text += ignore + "\n"
	escURL, escTitle := html.EscapeString(req.URL), html.EscapeString(title)
	if req.Purpose == PurposeSignIn {
		escTitle = "Sign in to <strong>" + html.EscapeString(host) + "</strong>"
	}
	return EmailMessage{
		Subject: title,
		Text:    text,
		HTML: `<!DOCTYPE html>
<html><body style="font-family: Helvetica, Arial, sans-serif; background: #f9f9f9; padding: 20px;">
<table width="100%" border="0" cellspacing="0" cellpadding="0" style="max-width: 600px; margin: auto; background: #ffffff; border-radius: 10px; padding: 20px;">
<tr><td align="center" style="font-size: 22px; color: #444444; padding: 10px 0;">` + escTitle + `</td></tr>
<tr><td align="center" style="padding: 20px 0;"><a href="` + escURL + `" target="_blank" style="font-size: 18px; color: #ffffff; background: #346df1; text-decoration: none; border-radius: 5px; padding: 10px 20px; display: inline-block; font-weight: bold;">` + button + `</a></td></tr>
` + codeHTML + `<tr><td align="center" style="font-size: 16px; color: #444444; padding: 0 0 10px 0;">` + html.EscapeString(ignore) + `</td></tr>
</table>
</body></html>
`,
	}
}
