package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"strings"
	"time"
	"unicode"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// EmailServiceError is an e-mail delivery service's refusal to send: the
// HTTP status it answered and the message it gave. It matches
// [provider.ErrEmailDelivery]. It never holds the API key.
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
	return msg + ": " + provider.ErrEmailDelivery.Error()
}

// Is reports whether target is [provider.ErrEmailDelivery].
func (e *EmailServiceError) Is(target error) bool { return target == provider.ErrEmailDelivery }

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

// WithEmailMessage replaces [provider.VerificationEmail] as the maker of the
// e-mail's subject and bodies. A nil function is ignored.
func WithEmailMessage(message func(provider.VerificationRequest) provider.EmailMessage) EmailServiceOption {
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

// options turns c into the options of the service constructors.
func (c EmailServiceConfig) options() []EmailServiceOption {
	return []EmailServiceOption{WithEmailHTTPClient(c.HTTPClient)}
}

// emailService is the sender behind one e-mail delivery service provider.
// It holds no mutable state once built, so it is safe for concurrent use.
type emailService struct {
	id      string
	apiKey  string
	client  *http.Client
	message func(provider.VerificationRequest) provider.EmailMessage
	build   func(s *emailService, from, to string, m provider.EmailMessage) (*http.Request, error)
}

// maxErrorBody is how much of a failed response is read for its message.
const maxErrorBody = 64 << 10

func newEmailService(id, name, apiKey, from string, opts []EmailServiceOption,
	build func(s *emailService, from, to string, m provider.EmailMessage) (*http.Request, error),
) *provider.EmailConfig {
	s := &emailService{
		id:      id,
		apiKey:  strings.TrimSpace(apiKey),
		client:  &http.Client{Timeout: 30 * time.Second},
		message: provider.VerificationEmail,
		build:   build,
	}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	return &provider.EmailConfig{ID: id, Name: name, From: from, MaxAge: provider.DefaultEmailMaxAge, SendVerificationRequest: s.send}
}

// send delivers the sign-in e-mail for req to req.Identifier from req.From.
func (s *emailService) send(ctx context.Context, req provider.VerificationRequest) error {
	if s.apiKey == "" {
		return fmt.Errorf("%w: %s: the API key is empty (pass the key the service issued)", core.ErrInvalidConfig, s.id)
	}
	if req.URL == "" {
		return fmt.Errorf("%w: %s: the verification request has no link (set the auth configuration's BaseURL)", core.ErrInvalidConfig, s.id)
	}
	if req.Identifier == "" || req.From == "" {
		return fmt.Errorf("%w: %s: the verification request needs a recipient and a From address", core.ErrInvalidConfig, s.id)
	}
	// One bare address: a custom NormalizeIdentifier must not turn the
	// recipient into a list (Mailgun's "to" takes one) or a display name.
	if addr, err := mail.ParseAddress(req.Identifier); err != nil || addr.Address != req.Identifier {
		return fmt.Errorf("%w: %s: recipient %q is not a single e-mail address", core.ErrInvalidConfig, s.id, req.Identifier)
	}
	r, err := s.build(s, req.From, req.Identifier, s.message(req))
	if err != nil {
		return err
	}
	r = r.WithContext(ctx)
	r.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(r)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", s.id, provider.ErrEmailDelivery, s.redactErr(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return fmt.Errorf("%s: %w: reading the answer: %w", s.id, provider.ErrEmailDelivery, s.redactErr(err))
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

// Error is the message with the API key removed.
func (e *redactedError) Error() string { return e.msg }

// Unwrap returns the original error.
func (e *redactedError) Unwrap() error { return e.err }

// jsonRequest builds a POST of body as JSON, with the service's credentials
// set by auth.
func jsonRequest(endpoint string, auth requestAuth, body any) (*http.Request, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return postRequest(endpoint, auth, "application/json", b)
}

// postRequest builds a POST of body, of the given content type, with the
// service's credentials set by auth.
func postRequest(endpoint string, auth requestAuth, contentType string, body []byte) (*http.Request, error) {
	r, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", contentType)
	auth(r)
	return r, nil
}

// requestAuth sets a service's credentials on a request.
type requestAuth func(r *http.Request)

// bearerAuth sends "Authorization: Bearer key".
func bearerAuth(key string) requestAuth {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+key) }
}

// basicAuth sends HTTP basic authentication.
func basicAuth(user, password string) requestAuth {
	return func(r *http.Request) { r.SetBasicAuth(user, password) }
}

// headerAuth sends the key in the header name.
func headerAuth(name, key string) requestAuth {
	return func(r *http.Request) { r.Header.Set(name, key) }
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
