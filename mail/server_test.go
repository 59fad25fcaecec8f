package mail_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
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

// received is one message the in-process SMTP server accepted.
type received struct {
	From string   // envelope sender (MAIL FROM)
	To   []string // envelope recipients (RCPT TO)
	Data []byte   // the message as sent after DATA
	User string   // the authenticated user, if any
	TLS  bool     // whether the session was encrypted
}

// smtpServer is a real SMTP server (github.com/emersion/go-smtp) on
// loopback that keeps what it receives.
type smtpServer struct {
	Host string
	Port int

	user, pass string // AUTH PLAIN credentials; empty: no AUTH offered
	rejectRcpt string // a recipient refused with 550
	// inData, when set, is signalled when a DATA command starts, and the
	// server then waits for release before reading the message.
	inData  chan struct{}
	release chan struct{}

	// closed receives a value each time a session ends (the client
	// quit or dropped the connection).
	closed chan struct{}

	mu       sync.Mutex
	mails    []received
	authSeen []string // user names tried with AUTH
}

type serverOpts struct {
	user, pass string
	tls        *tls.Config // offered with STARTTLS
	implicit   *tls.Config // TLS from the first byte
	rejectRcpt string
	stallData  bool
	listen     string // address to listen on; 127.0.0.1 by default
}

func startSMTP(t *testing.T, o serverOpts) *smtpServer {
	t.Helper()
	s := &smtpServer{user: o.user, pass: o.pass, rejectRcpt: o.rejectRcpt, closed: make(chan struct{}, 64)}
	if o.stallData {
		s.inData, s.release = make(chan struct{}, 1), make(chan struct{})
	}
	srv := smtp.NewServer(s)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = time.Minute, time.Minute
	srv.AllowInsecureAuth = o.tls == nil && o.implicit == nil
	srv.TLSConfig = o.tls
	var ln net.Listener
	if o.listen == "" {
		o.listen = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.listen, "0"))
	if err != nil {
		t.Fatal(err)
	}
	if o.implicit != nil {
		ln = tls.NewListener(ln, o.implicit)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		if s.release != nil {
			select {
			case <-s.release:
			default:
				close(s.release)
			}
		}
		srv.Close()
	})
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	s.Host = host
	s.Port, _ = strconv.Atoi(port)
	return s
}

func (s *smtpServer) received() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.mails...)
}

func (s *smtpServer) authTried() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.authSeen...)
}

// NewSession implements smtp.Backend.
func (s *smtpServer) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{srv: s, conn: c}, nil
}

type session struct {
	srv  *smtpServer
	conn *smtp.Conn
	user string
	from string
	to   []string
}

func (ss *session) AuthMechanisms() []string {
	if ss.srv.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		ss.srv.mu.Lock()
		ss.srv.authSeen = append(ss.srv.authSeen, username)
		ss.srv.mu.Unlock()
		if username != ss.srv.user || password != ss.srv.pass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.srv.user != "" && ss.user == "" {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if to == ss.srv.rejectRcpt {
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
	ss.srv.mails = append(ss.srv.mails, received{From: ss.from, To: ss.to, Data: b, User: ss.user, TLS: isTLS})
	ss.srv.mu.Unlock()
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

// waitClosed fails the test unless the client ends its session well
// before the server's one-minute read timeout would.
func (s *smtpServer) waitClosed(t *testing.T) {
	t.Helper()
	select {
	case <-s.closed:
	case <-time.After(20 * time.Second):
		t.Error("the client left the SMTP connection open")
	}
}

// testCert makes a self-signed certificate for 127.0.0.1 and returns the
// server's TLS configuration and a pool that trusts it.
func testCert(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "authport test SMTP"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, pool
}

// plainTextLink reads a message as a mail reader would (headers, the
// multipart body, the text/plain part decoded from quoted-printable) and
// returns the first line of that part starting with https://.
func plainTextLink(data []byte) string {
	msg, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return ""
	}
	_, params, _ := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			return ""
		}
		if ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type")); ct != "text/plain" {
			continue
		}
		body, _ := io.ReadAll(part)
		for _, line := range strings.Split(string(body), "\r\n") {
			if strings.HasPrefix(line, "https://") {
				return line
			}
		}
	}
}

// onlyMail returns the one message the server received.
func (s *smtpServer) onlyMail(t *testing.T) received {
	t.Helper()
	m := s.received()
	if len(m) != 1 {
		t.Fatalf("server received %d messages, want 1", len(m))
	}
	if !bytes.HasSuffix(m[0].Data, []byte("\r\n")) {
		t.Errorf("message does not end with CRLF")
	}
	return m[0]
}
