package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// ErrEmailDelivery is returned, wrapped, when an e-mail delivery service
// could not be reached or refused to send a sign-in e-mail. A refusal is an
// [*EmailServiceError] carrying the HTTP status and the service's message.
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

// EmailServiceError is an e-mail delivery service's refusal to send: the
// HTTP status it answered and the message it gave. It matches
// [ErrEmailDelivery]. It never holds the API key.
type EmailServiceError struct {
	// Service is the provider id of the service, e.g. "resend".
	Service string
	// StatusCode is the HTTP status the service answered.
	StatusCode int
	// Message is the service's error message, as far as it gave one.
	Message string
}

// Error says which service refused, with what status and message.
func (e *EmailServiceError) Error() string {
	msg := fmt.Sprintf("%s answered %d %s", e.Service, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	switch {
	case e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500:
		msg += " (the service is busy or failing: try again later)"
	case e.StatusCode >= 400:
		msg += " (check the API key, the From address and the sending domain in the service's dashboard)"
	}
	return msg + ": " + ErrEmailDelivery.Error()
}

// Is reports whether target is [ErrEmailDelivery].
func (e *EmailServiceError) Is(target error) bool { return target == ErrEmailDelivery }

// EmailServiceOption changes how an e-mail delivery service provider
// ([Resend], [SendGrid], [Postmark], [Mailgun], [ForwardEmail]) sends.
type EmailServiceOption func(*emailService)

// WithEmailHTTPClient makes the service send through client instead of
// a client of its own (which has a 30-second timeout). A nil client is
// ignored.
func WithEmailHTTPClient(client *http.Client) EmailServiceOption {
	return func(s *emailService) {
		if client != nil {
			s.client = client
		}
	}
}

// WithEmailMessage replaces [VerificationEmail] as the maker of the
// e-mail's subject and bodies. A nil function is ignored.
func WithEmailMessage(message func(VerificationRequest) EmailMessage) EmailServiceOption {
	return func(s *emailService) {
		if message != nil {
			s.message = message
		}
	}
}

// EmailServiceConfig is what a [UserConfig] carries for the e-mail
// delivery services of [BuiltIns] ("resend", "sendgrid", "postmark",
// "mailgun", "forwardemail").
type EmailServiceConfig struct {
	// APIKey is the key (Postmark: the server token) the service issued.
	APIKey string
	// From is the sender address, e.g. "Example <no-reply@example.com>".
	From string
	// Domain is the Mailgun sending domain, e.g. "mg.example.com".
	Domain string
	// Region is the Mailgun region: [MailgunUS] (also when empty) or
	// [MailgunEU].
	Region MailgunRegion
	// HTTPClient, when not nil, is used instead of the service's own
	// client ([WithEmailHTTPClient]).
	HTTPClient *http.Client
}

func (c EmailServiceConfig) options() []EmailServiceOption {
	return []EmailServiceOption{WithEmailHTTPClient(c.HTTPClient)}
}

// MailgunRegion is the region of a Mailgun account, which decides the API
// host.
type MailgunRegion string

// The Mailgun regions.
const (
	// MailgunUS is api.mailgun.net, the default.
	MailgunUS MailgunRegion = "us"
	// MailgunEU is api.eu.mailgun.net.
	MailgunEU MailgunRegion = "eu"
)

// Resend returns an e-mail provider (id "resend") that sends the sign-in
// link through Resend's API: POST https://api.resend.com/emails with
// "Authorization: Bearer apiKey" and a JSON body.
func Resend(apiKey, from string, opts ...EmailServiceOption) *EmailConfig {
	return newEmailService("resend", "Resend", apiKey, from, opts, func(s *emailService, from, to string, m EmailMessage) (*http.Request, error) {
		r, err := jsonRequest("https://api.resend.com/emails", map[string]any{
			"from": from, "to": []string{to}, "subject": m.Subject, "text": m.Text, "html": m.HTML,
		})
		if err == nil {
			r.Header.Set("Authorization", "Bearer "+s.apiKey)
		}
		return r, err
	})
}

// SendGrid returns an e-mail provider (id "sendgrid") that sends the
// sign-in link through SendGrid's v3 Mail Send API: POST
// https://api.sendgrid.com/v3/mail/send with "Authorization: Bearer apiKey"
// and a JSON body.
func SendGrid(apiKey, from string, opts ...EmailServiceOption) *EmailConfig {
	return newEmailService("sendgrid", "SendGrid", apiKey, from, opts, func(s *emailService, from, to string, m EmailMessage) (*http.Request, error) {
		addr, err := mail.ParseAddress(from)
		if err != nil {
			return nil, fmt.Errorf("%w: sendgrid: From %q is not an e-mail address", ErrInvalidConfig, from)
		}
		sender := map[string]string{"email": addr.Address}
		if addr.Name != "" {
			sender["name"] = addr.Name
		}
		r, err := jsonRequest("https://api.sendgrid.com/v3/mail/send", map[string]any{
			"personalizations": []any{map[string]any{"to": []any{map[string]string{"email": to}}}},
			"from":             sender,
			"subject":          m.Subject,
			"content": []any{
				map[string]string{"type": "text/plain", "value": m.Text},
				map[string]string{"type": "text/html", "value": m.HTML},
			},
		})
		if err == nil {
			r.Header.Set("Authorization", "Bearer "+s.apiKey)
		}
		return r, err
	})
}

// Postmark returns an e-mail provider (id "postmark") that sends the
// sign-in link through Postmark's API: POST https://api.postmarkapp.com/email
// with the server token in the "X-Postmark-Server-Token" header and a JSON
// body, on the "outbound" message stream.
func Postmark(serverToken, from string, opts ...EmailServiceOption) *EmailConfig {
	return newEmailService("postmark", "Postmark", serverToken, from, opts, func(s *emailService, from, to string, m EmailMessage) (*http.Request, error) {
		r, err := jsonRequest("https://api.postmarkapp.com/email", map[string]any{
			"From": from, "To": to, "Subject": m.Subject, "TextBody": m.Text, "HtmlBody": m.HTML,
			"MessageStream": "outbound",
		})
		if err == nil {
			r.Header.Set("X-Postmark-Server-Token", s.apiKey)
		}
		return r, err
	})
}

// Mailgun returns an e-mail provider (id "mailgun") that sends the sign-in
// link through Mailgun's API: POST https://api.mailgun.net/v3/DOMAIN/messages
// (api.eu.mailgun.net for [MailgunEU]) with HTTP basic authentication
// ("api" and apiKey) and a form body. domain is the sending domain
// configured in Mailgun; region "" means [MailgunUS].
func Mailgun(apiKey, domain string, region MailgunRegion, from string, opts ...EmailServiceOption) *EmailConfig {
	return newEmailService("mailgun", "Mailgun", apiKey, from, opts, func(s *emailService, from, to string, m EmailMessage) (*http.Request, error) {
		host := ""
		switch region {
		case "", MailgunUS:
			host = "api.mailgun.net"
		case MailgunEU:
			host = "api.eu.mailgun.net"
		default:
			return nil, fmt.Errorf("%w: mailgun: unknown region %q (use %q or %q)", ErrInvalidConfig, region, MailgunUS, MailgunEU)
		}
		d := strings.TrimSpace(domain)
		if d == "" || strings.ContainsAny(d, "/?#@ ") {
			return nil, fmt.Errorf("%w: mailgun: sending domain %q is empty or not a domain (pass the domain set up in Mailgun, e.g. mg.example.com)", ErrInvalidConfig, domain)
		}
		form := url.Values{"from": {from}, "to": {to}, "subject": {m.Subject}, "text": {m.Text}, "html": {m.HTML}}
		r, err := http.NewRequest(http.MethodPost, "https://"+host+"/v3/"+url.PathEscape(d)+"/messages", strings.NewReader(form.Encode()))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.SetBasicAuth("api", s.apiKey)
		return r, nil
	})
}

// ForwardEmail returns an e-mail provider (id "forwardemail") that sends
// the sign-in link through Forward Email's API: POST
// https://api.forwardemail.net/v1/emails with HTTP basic authentication
// (the API key as the user name, no password) and a JSON body.
func ForwardEmail(apiKey, from string, opts ...EmailServiceOption) *EmailConfig {
	return newEmailService("forwardemail", "Forward Email", apiKey, from, opts, func(s *emailService, from, to string, m EmailMessage) (*http.Request, error) {
		r, err := jsonRequest("https://api.forwardemail.net/v1/emails", map[string]any{
			"from": from, "to": to, "subject": m.Subject, "text": m.Text, "html": m.HTML,
		})
		if err == nil {
			r.SetBasicAuth(s.apiKey, "")
		}
		return r, err
	})
}

// emailService is the sender behind one e-mail delivery service provider.
// It holds no mutable state once built, so it is safe for concurrent use.
type emailService struct {
	id      string
	apiKey  string
	client  *http.Client
	message func(VerificationRequest) EmailMessage
	build   func(s *emailService, from, to string, m EmailMessage) (*http.Request, error)
}

// maxErrorBody is how much of a failed response is read for its message.
const maxErrorBody = 64 << 10

func newEmailService(id, name, apiKey, from string, opts []EmailServiceOption,
	build func(s *emailService, from, to string, m EmailMessage) (*http.Request, error),
) *EmailConfig {
	s := &emailService{
		id:      id,
		apiKey:  strings.TrimSpace(apiKey),
		client:  &http.Client{Timeout: 30 * time.Second},
		message: VerificationEmail,
		build:   build,
	}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	return &EmailConfig{ID: id, Name: name, From: from, MaxAge: DefaultEmailMaxAge, SendVerificationRequest: s.send}
}

// send delivers the sign-in e-mail for req to req.Identifier from req.From.
func (s *emailService) send(ctx context.Context, req VerificationRequest) error {
	if s.apiKey == "" {
		return fmt.Errorf("%w: %s: the API key is empty (pass the key the service issued)", ErrInvalidConfig, s.id)
	}
	if req.URL == "" {
		return fmt.Errorf("%w: %s: the verification request has no link (set the auth configuration's BaseURL)", ErrInvalidConfig, s.id)
	}
	if req.Identifier == "" || req.From == "" {
		return fmt.Errorf("%w: %s: the verification request needs a recipient and a From address", ErrInvalidConfig, s.id)
	}
	// One bare address: a custom NormalizeIdentifier must not turn the
	// recipient into a list (Mailgun's "to" takes one) or a display name.
	if addr, err := mail.ParseAddress(req.Identifier); err != nil || addr.Address != req.Identifier {
		return fmt.Errorf("%w: %s: recipient %q is not a single e-mail address", ErrInvalidConfig, s.id, req.Identifier)
	}
	r, err := s.build(s, req.From, req.Identifier, s.message(req))
	if err != nil {
		return err
	}
	r = r.WithContext(ctx)
	r.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(r)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", s.id, ErrEmailDelivery, s.redactErr(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return fmt.Errorf("%s: %w: reading the answer: %w", s.id, ErrEmailDelivery, s.redactErr(err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &EmailServiceError{Service: s.id, StatusCode: resp.StatusCode, Message: s.redact(serviceMessage(body))}
	}
	if s.id == "postmark" { // Postmark reports some refusals as ErrorCode in a 200 answer
		var pm struct {
			ErrorCode int
			Message   string
		}
		if json.Unmarshal(body, &pm) == nil && pm.ErrorCode != 0 {
			return &EmailServiceError{Service: s.id, StatusCode: resp.StatusCode, Message: s.redact(fmt.Sprintf("ErrorCode %d: %s", pm.ErrorCode, clean(pm.Message)))}
		}
	}
	return nil
}

// redact removes the API key from a message, in case a service or a
// transport error echoes it.
func (s *emailService) redact(msg string) string {
	if s.apiKey == "" {
		return msg
	}
	return strings.ReplaceAll(msg, s.apiKey, "[redacted]")
}

// redactErr keeps err matchable (context cancellation, timeouts) while
// making sure its text holds no API key.
func (s *emailService) redactErr(err error) error {
	if msg := err.Error(); strings.Contains(msg, s.apiKey) {
		return &redactedError{msg: s.redact(msg), err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func jsonRequest(endpoint string, body any) (*http.Request, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	r, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	return r, nil
}

// serviceMessage finds the human-readable message in a service's error
// answer: the "message" / "Message" / "error" member of a JSON object, or
// the messages of an "errors" list (SendGrid), else the body's text.
func serviceMessage(body []byte) string {
	var obj map[string]any
	if json.Unmarshal(body, &obj) == nil {
		for _, k := range []string{"message", "Message", "error"} {
			if s, ok := obj[k].(string); ok && s != "" {
				return clean(s)
			}
		}
		if list, ok := obj["errors"].([]any); ok {
			var msgs []string
			for _, e := range list {
				switch e := e.(type) {
				case string:
					msgs = append(msgs, clean(e))
				case map[string]any:
					if s, ok := e["message"].(string); ok {
						msgs = append(msgs, clean(s))
					}
				}
			}
			if len(msgs) > 0 {
				return strings.Join(msgs, "; ")
			}
		}
	}
	return clean(string(body))
}

// clean makes a service's text safe to put in an error: control
// characters become spaces, runs of space collapse, and it is cut at 300
// bytes.
func clean(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}
