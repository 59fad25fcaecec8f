// Package mailtest runs a real SMTP server (github.com/emersion/go-smtp)
// on loopback for tests that send mail: [Start] starts one private to a
// test, which keeps every message it accepts ([Server.Messages]), and
// [Link] reads the sign-in link out of a message the way a mail reader
// shows it. The server can require AUTH PLAIN, offer STARTTLS or speak TLS
// from the first byte, refuse a recipient, and hold a message in DATA
// ([Options]). The package is meant for tests.
package mailtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	netmail "net/mail"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From string   // envelope sender (MAIL FROM)
	To   []string // envelope recipients (RCPT TO)
	Data []byte   // the message as sent after DATA
	User string   // the authenticated user, if any
	TLS  bool     // whether the session was encrypted
}

// Options configures the server [Start] starts; the zero value is a
// server on 127.0.0.1 without AUTH or TLS that accepts every recipient.
type Options struct {
	// User and Pass are the AUTH PLAIN credentials the server requires
	// before MAIL FROM; empty: no AUTH offered.
	User, Pass string
	// TLS is offered with STARTTLS; Implicit is spoken from the first byte.
	TLS, Implicit *tls.Config
	// RejectRcpt is a recipient refused with 550 (compared without regard
	// to case, as mail servers compare mailboxes).
	RejectRcpt string
	// StallData makes the server signal [Server.InData] when a DATA command
	// starts and then not read the message until the test ends.
	StallData bool
	// Listen is the address to listen on; 127.0.0.1 when empty.
	Listen string
}

// Server is a real SMTP server on loopback that keeps what it receives. It
// is the go-smtp backend of the server; a zero Server serves as the
// backend of an smtp.Server set up by hand.
type Server struct {
	Host string // the host the server listens on
	Port int    // the port the server listens on

	opts Options
	// inData, when set, is signalled when a DATA command starts, and the
	// session then waits for release before reading the message.
	inData  chan struct{}
	release chan struct{}
	// closed receives a value each time a session ends (the client quit or
	// dropped the connection); arrived, each time a message is kept.
	closed  chan struct{}
	arrived chan struct{}

	mu       sync.Mutex
	mails    []Message
	authSeen []string // user names tried with AUTH
}

// Start starts a server for the rest of t, configured by o.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{opts: o, closed: make(chan struct{}, 64), arrived: make(chan struct{}, 64)}
	if o.StallData {
		s.inData, s.release = make(chan struct{}, 1), make(chan struct{})
	}
	srv := smtp.NewServer(s)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = time.Minute, time.Minute
	srv.AllowInsecureAuth = o.TLS == nil && o.Implicit == nil
	srv.TLSConfig = o.TLS
	host := o.Listen
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("SMTP listener: %v", err)
	}
	if o.Implicit != nil {
		ln = tls.NewListener(ln, o.Implicit)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		if s.release != nil {
			close(s.release)
		}
		_ = srv.Close()
	})
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	s.Host = host
	s.Port, _ = strconv.Atoi(port)
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Messages returns the messages the server accepted so far, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.mails...)
}

// AuthTried returns the user names clients tried with AUTH so far.
func (s *Server) AuthTried() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.authSeen...)
}

// InData is signalled when a DATA command starts on a server started with
// [Options.StallData] (nil otherwise).
func (s *Server) InData() <-chan struct{} { return s.inData }

// WaitClosed fails t unless a client session ends well before the
// server's one-minute read timeout would end it.
func (s *Server) WaitClosed(t testing.TB) {
	t.Helper()
	select {
	case <-s.closed:
	case <-time.After(20 * time.Second):
		t.Error("the client left the SMTP connection open")
	}
}

// Wait waits until the server has accepted message number n (from 0) and
// returns it, or returns ctx's error when ctx ends first.
func (s *Server) Wait(ctx context.Context, n int) (Message, error) {
	for {
		s.mu.Lock()
		if len(s.mails) > n {
			m := s.mails[n]
			s.mu.Unlock()
			return m, nil
		}
		s.mu.Unlock()
		select {
		case <-s.arrived:
		case <-ctx.Done():
			return Message{}, fmt.Errorf("no e-mail number %d arrived at the SMTP server %s: %w", n+1, s.Addr(), ctx.Err())
		}
	}
}

// NewSession implements smtp.Backend.
func (s *Server) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{srv: s, conn: c}, nil
}

type session struct {
	srv  *Server
	conn *smtp.Conn
	user string
	from string
	to   []string
}

func (ss *session) AuthMechanisms() []string {
	if ss.srv.opts.User == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		ss.srv.mu.Lock()
		ss.srv.authSeen = append(ss.srv.authSeen, username)
		ss.srv.mu.Unlock()
		if username != ss.srv.opts.User || password != ss.srv.opts.Pass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.srv.opts.User != "" && ss.user == "" {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if r := ss.srv.opts.RejectRcpt; r != "" && strings.EqualFold(to, r) {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user here"}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	if ss.srv.inData != nil {
		ss.srv.inData <- struct{}{}
		<-ss.srv.release
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := ss.conn.TLSConnectionState()
	ss.srv.mu.Lock()
	ss.srv.mails = append(ss.srv.mails, Message{From: ss.from, To: ss.to, Data: b, User: ss.user, TLS: isTLS})
	ss.srv.mu.Unlock()
	select {
	case ss.srv.arrived <- struct{}{}:
	default:
	}
	return nil
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error {
	select {
	case ss.srv.closed <- struct{}{}:
	default:
	}
	return nil
}

// Link reads a message as a mail reader would (headers, the multipart
// body, the text/plain part decoded from quoted-printable) and returns the
// first line of that part that is an http:// or https:// link.
func Link(data []byte) (string, error) {
	body, err := Text(data)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(body) {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://") {
			return line, nil
		}
	}
	return "", errors.New("the text/plain part has no link:\n" + body)
}

// Text reads a message as a mail reader would (headers, the multipart
// body, the text/plain part decoded from quoted-printable) and returns its
// text/plain part.
func Text(data []byte) (string, error) {
	msg, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("parse the e-mail: %w", err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return "", fmt.Errorf("the e-mail's Content-Type: %w", err)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		return "", fmt.Errorf("the e-mail is %q, want multipart", mt)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart() // decodes quoted-printable
		if err != nil {
			return "", fmt.Errorf("no text/plain part in the e-mail: %w", err)
		}
		if ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type")); ct != "text/plain" {
			continue
		}
		body, err := io.ReadAll(part)
		if err != nil {
			return "", fmt.Errorf("read the text/plain part: %w", err)
		}
		return string(body), nil
	}
}
