// Package mail delivers authport's e-mail sign-in links over SMTP.
//
// [SMTP] returns an e-mail provider ([provider.EmailConfig]) whose
// SendVerificationRequest sends the sign-in link as a multipart message
// (plain text and HTML) through an SMTP server; [New] returns the
// [*Sender] alone, for an e-mail provider configured otherwise. Sending is
// built on github.com/wneessen/go-mail: one connection per message, so a
// Sender is safe for concurrent use and holds no connection between
// sign-ins.
//
// The address the link is sent to is the identifier core/auth has already
// normalised (trimmed and lowercased, as Auth.js does, by the provider's
// NormalizeIdentifier or [provider.NormalizeEmail]); the sender does not
// change it again.
package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/textproto"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
	gomail "github.com/wneessen/go-mail"
	gosmtp "github.com/wneessen/go-mail/smtp"
)

// errAuthFailed is returned, wrapped, when the SMTP server refuses the
// configured user name and password. It also matches
// [provider.ErrEmailDelivery].
var errAuthFailed = errors.New("SMTP server refused the credentials (check Config.Username and Config.Password)")

// ErrRecipientRejected is returned, wrapped, when the SMTP server refuses
// the recipient address. It also matches [provider.ErrEmailDelivery].
var ErrRecipientRejected = errors.New("SMTP server rejected the recipient")

// errInsecureAuth is returned, wrapped, when credentials would have gone
// over an unencrypted connection to a host other than localhost; they are
// not sent. It also matches [provider.ErrEmailDelivery].
var errInsecureAuth = errors.New("credentials not sent over an unencrypted connection (use TLSMandatory or TLSImplicit, or a relay on localhost)")

// TLSPolicy says how the connection to the SMTP server is encrypted.
type TLSPolicy int

const (
	// TLSMandatory connects in plain text and upgrades with STARTTLS
	// before anything else is sent; a server that does not offer
	// STARTTLS is refused. The default; port 587 unless set.
	TLSMandatory TLSPolicy = iota
	// TLSImplicit speaks TLS from the first byte (SMTPS); port 465 unless
	// set.
	TLSImplicit
	// TLSOpportunistic upgrades with STARTTLS when the server offers it
	// and goes on in plain text otherwise; credentials are then sent only
	// to localhost. Port 587 unless set.
	TLSOpportunistic
	// TLSNone never encrypts: for a relay on the loopback interface. Port
	// 25 unless set.
	TLSNone
)

// String returns the policy's name.
func (p TLSPolicy) String() string {
	switch p {
	case TLSMandatory:
		return "TLSMandatory"
	case TLSImplicit:
		return "TLSImplicit"
	case TLSOpportunistic:
		return "TLSOpportunistic"
	case TLSNone:
		return "TLSNone"
	}
	return fmt.Sprintf("TLSPolicy(%d)", int(p))
}

// DefaultTimeout is how long one exchange with the SMTP server may take
// when [Config.Timeout] is zero; the context can end it sooner.
const DefaultTimeout = 30 * time.Second

// Config says how to reach the SMTP server and who the sign-in e-mail is
// from.
type Config struct {
	// Host is the SMTP server's host name or IP address. Required.
	Host string
	// Port is the server's port; 0 means the policy's usual port (587,
	// 465 for [TLSImplicit], 25 for [TLSNone]).
	Port int
	// Username and Password authenticate to the server (SMTP AUTH, with
	// the strongest of SCRAM-SHA-256, SCRAM-SHA-1, PLAIN and LOGIN the
	// server offers). An empty Username sends no AUTH. The password never
	// appears in an error.
	Username, Password string
	// TLS is the encryption policy; the zero value is [TLSMandatory].
	TLS TLSPolicy
	// TLSConfig is the TLS client configuration, e.g. with RootCAs for a
	// private certificate authority. nil means the system's roots, TLS
	// 1.2 or later. An empty ServerName is set to Host.
	TLSConfig *tls.Config
	// From is the sender, e.g. "Example <no-reply@example.com>": the
	// From header and the envelope sender. [SMTP] requires it and gives
	// it to the provider; a [Sender] uses the VerificationRequest's From
	// when that is set, and this one otherwise.
	From string
	// HELO is the name sent in EHLO; empty means the machine's host name.
	HELO string
	// Timeout bounds one exchange with the server; 0 means
	// [DefaultTimeout].
	Timeout time.Duration
	// Message makes the subject and bodies from the request; nil means
	// [provider.VerificationEmail].
	Message func(provider.VerificationRequest) provider.EmailMessage
}

// Sender sends sign-in e-mails through an SMTP server. It is safe for
// concurrent use.
type Sender struct {
	cfg Config
}

// New checks cfg and returns a Sender. An error matches
// [core.ErrInvalidConfig] and says which field is wrong.
func New(cfg Config) (*Sender, error) {
	bad := func(format string, args ...any) (*Sender, error) {
		return nil, fmt.Errorf("%w: mail: "+format, append([]any{core.ErrInvalidConfig}, args...)...)
	}
	cfg.Host = strings.TrimSpace(cfg.Host)
	switch {
	case cfg.Host == "":
		return bad("Config.Host is empty (the SMTP server's host name)")
	case strings.ContainsAny(cfg.Host, " /\r\n") || strings.HasPrefix(cfg.Host, "unix:"):
		return bad("Config.Host %q is not a host name", cfg.Host)
	case cfg.Port < 0 || cfg.Port > 65535:
		return bad("Config.Port %d is out of range", cfg.Port)
	case cfg.TLS < TLSMandatory || cfg.TLS > TLSNone:
		return bad("unknown Config.TLS %v", cfg.TLS)
	case cfg.Timeout < 0:
		return bad("Config.Timeout is negative")
	case cfg.Username == "" && cfg.Password != "":
		return bad("Config.Password is set but Config.Username is empty")
	}
	if cfg.From != "" {
		if _, err := mail.ParseAddress(cfg.From); err != nil {
			return bad("Config.From %q is not an e-mail address", cfg.From)
		}
	}
	if cfg.Port == 0 {
		switch cfg.TLS {
		case TLSImplicit:
			cfg.Port = 465
		case TLSNone:
			cfg.Port = 25
		default:
			cfg.Port = 587
		}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.TLSConfig == nil {
		cfg.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		cfg.TLSConfig = cfg.TLSConfig.Clone()
	}
	if cfg.TLSConfig.ServerName == "" {
		cfg.TLSConfig.ServerName = cfg.Host
	}
	if cfg.Message == nil {
		cfg.Message = provider.VerificationEmail
	}
	return &Sender{cfg: cfg}, nil
}

// SMTP returns an e-mail provider sending its links through the SMTP
// server of cfg: [provider.Email] (id "email", name "Email", links valid
// 24 hours) with From set to cfg.From and SendVerificationRequest to a
// [Sender]'s. Auth.js calls its SMTP provider "nodemailer": set ID to
// that when sharing a database with an Auth.js app that uses it.
func SMTP(cfg Config) (*provider.EmailConfig, error) {
	if strings.TrimSpace(cfg.From) == "" {
		return nil, fmt.Errorf("%w: mail: Config.From is empty (the sender of the sign-in e-mail)", core.ErrInvalidConfig)
	}
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return provider.Email(cfg.From, s.SendVerificationRequest), nil
}

// SendVerificationRequest sends the sign-in link of req to
// req.Identifier, from req.From (or [Config.From]), as a multipart/alternative
// message with a plain-text and an HTML part. It honours ctx for the whole
// exchange: a cancelled context closes the connection. Errors match
// [provider.ErrEmailDelivery] (and [ErrRecipientRejected] where it
// applies; the message says when the server refused the credentials, or
// when they were withheld from an unencrypted connection), or
// [core.ErrInvalidConfig] for a request that cannot be sent.
func (s *Sender) SendVerificationRequest(ctx context.Context, req provider.VerificationRequest) error {
	if req.URL == "" {
		return fmt.Errorf("%w: mail: the verification request has no link (set the auth configuration's BaseURL)", core.ErrInvalidConfig)
	}
	from := req.From
	if from == "" {
		from = s.cfg.From
	}
	if from == "" {
		return fmt.Errorf("%w: mail: no sender (set Config.From or the provider's From)", core.ErrInvalidConfig)
	}
	// One bare address: a custom NormalizeIdentifier must not turn the
	// recipient into a list or a display name.
	if addr, err := mail.ParseAddress(req.Identifier); err != nil || addr.Address != req.Identifier {
		return fmt.Errorf("%w: mail: recipient %q is not a single e-mail address", core.ErrInvalidConfig, req.Identifier)
	}
	content := s.cfg.Message(req)

	msg := gomail.NewMsg()
	if err := msg.From(from); err != nil {
		return fmt.Errorf("%w: mail: From %q: %w", core.ErrInvalidConfig, from, err)
	}
	if err := msg.To(req.Identifier); err != nil {
		return fmt.Errorf("%w: mail: recipient %q: %w", core.ErrInvalidConfig, req.Identifier, err)
	}
	msg.Subject(content.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, content.Text)
	msg.AddAlternativeString(gomail.TypeTextHTML, content.HTML)

	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mail: %w: %w", provider.ErrEmailDelivery, err)
	}
	// The connection is closed when ctx ends, which ends whatever
	// exchange is under way; go-mail alone watches the context only
	// while dialling.
	// go-mail leaves the connection open when EHLO, STARTTLS or AUTH
	// fails; it is closed here whatever happens.
	var stop func() bool
	var raw net.Conn
	defer func() {
		if stop != nil {
			stop()
		}
		if raw != nil {
			raw.Close()
		}
	}()
	dial := func(dctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		if s.cfg.TLS == TLSImplicit {
			tc := tls.Client(conn, s.cfg.TLSConfig)
			if err := tc.HandshakeContext(dctx); err != nil {
				conn.Close()
				return nil, err
			}
			conn = tc
		}
		raw = conn
		stop = context.AfterFunc(ctx, func() { conn.Close() })
		return conn, nil
	}
	opts := []gomail.Option{
		gomail.WithPort(s.cfg.Port),
		gomail.WithTimeout(s.cfg.Timeout),
		gomail.WithTLSConfig(s.cfg.TLSConfig),
		gomail.WithDialContextFunc(dial),
	}
	switch s.cfg.TLS {
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL()) // the dialler above does the handshake
	case TLSOpportunistic:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if s.cfg.HELO != "" {
		opts = append(opts, gomail.WithHELO(s.cfg.HELO))
	}
	if s.cfg.Username != "" {
		opts = append(opts,
			gomail.WithOpportunisticSMTPAuth(gomail.SMTPAuthSCRAMSHA256, gomail.SMTPAuthSCRAMSHA1, gomail.SMTPAuthPlain, gomail.SMTPAuthLogin),
			gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	client, err := gomail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return fmt.Errorf("%w: mail: %w", core.ErrInvalidConfig, s.redact(err))
	}
	conn, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return s.deliveryError("connecting to "+client.ServerAddr(), ctx, err)
	}
	err = client.SendWithSMTPClient(conn, msg)
	// Once the server has accepted the message, a failed QUIT changes
	// nothing: the link is on its way.
	_ = client.CloseWithSMTPClient(conn)
	if err != nil {
		return s.deliveryError("sending to "+req.Identifier, ctx, err)
	}
	return nil
}

// deliveryError classifies err and makes sure its text holds no password.
func (s *Sender) deliveryError(doing string, ctx context.Context, err error) error {
	var kind []error
	var se *gomail.SendError
	var te *textproto.Error
	switch {
	case ctx.Err() != nil:
		kind = append(kind, ctx.Err())
	case errors.As(err, &se) && se.Reason == gomail.ErrSMTPRcptTo:
		kind = append(kind, ErrRecipientRejected)
	case errors.Is(err, gosmtp.ErrUnencrypted):
		kind = append(kind, errInsecureAuth)
	case strings.Contains(err.Error(), "SMTP AUTH failed") && errors.As(err, &te) && (te.Code == 535 || te.Code == 534 || te.Code == 454):
		kind = append(kind, errAuthFailed)
	}
	msg := "mail: " + doing
	for _, k := range kind {
		msg += ": " + k.Error()
	}
	return &deliveryError{msg: msg + ": " + s.redact(err).Error() + ": " + provider.ErrEmailDelivery.Error(), kinds: kind, err: err}
}

type deliveryError struct {
	msg   string
	kinds []error
	err   error
}

func (e *deliveryError) Error() string { return e.msg }

// Is matches [provider.ErrEmailDelivery] and the error's kinds.
func (e *deliveryError) Is(target error) bool {
	if target == provider.ErrEmailDelivery {
		return true
	}
	for _, k := range e.kinds {
		if errors.Is(k, target) {
			return true
		}
	}
	return false
}

// Unwrap returns go-mail's error, for errors.As (e.g. *gomail.SendError).
func (e *deliveryError) Unwrap() error { return e.err }

// redact returns err, or an error of the same chain whose text has the
// password removed.
func (s *Sender) redact(err error) error {
	if s.cfg.Password == "" || !strings.Contains(err.Error(), s.cfg.Password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), s.cfg.Password, "[redacted]"))
}
