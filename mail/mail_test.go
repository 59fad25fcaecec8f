package mail_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"mime/multipart"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/mail"
	"github.com/authport/authport/mail/mailtest"
)

const (
	link     = "https://app.example.com/auth/callback/email?email=user%40example.com&token=4f0c2d7e9b1a"
	to       = "user@example.com"
	from     = "Acme <no-reply@acme.example>"
	password = "s3cret-Pa55word"
)

func request() provider.VerificationRequest {
	return provider.VerificationRequest{Identifier: to, URL: link, Token: "4f0c2d7e9b1a", Expires: time.Now().Add(time.Hour), From: from, ProviderID: "email"}
}

func sender(t *testing.T, cfg mail.Config) *mail.Sender {
	t.Helper()
	s, err := mail.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// parsed is a received message taken apart.
type parsed struct {
	Header     netmail.Header
	Text, HTML string
}

// parse reads the message as a mail reader would: headers, then the
// multipart/alternative body, its parts decoded from their transfer
// encoding.
func parse(t *testing.T, data []byte) parsed {
	t.Helper()
	msg, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a message: %v\n%s", err, data)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type = %q (%v), want multipart/alternative", msg.Header.Get("Content-Type"), err)
	}
	p := parsed{Header: msg.Header}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	var types []string
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(part) // decodes quoted-printable
		if err != nil {
			t.Fatal(err)
		}
		body := bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n")) // lines end in CRLF on the wire
		ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		types = append(types, ct)
		switch ct {
		case "text/plain":
			p.Text = string(body)
		case "text/html":
			p.HTML = string(body)
		}
	}
	if strings.Join(types, ",") != "text/plain,text/html" {
		t.Errorf("parts = %v, want text/plain then text/html", types)
	}
	return p
}

func checkContent(t *testing.T, p parsed, wantLink string) {
	t.Helper()
	if !strings.Contains(p.Text, "\n"+wantLink+"\n") {
		t.Errorf("text part does not hold the link %q on its own line:\n%s", wantLink, p.Text)
	}
	if !strings.Contains(p.HTML, `href="`+html.EscapeString(wantLink)+`"`) {
		t.Errorf("HTML part does not link to %q:\n%s", wantLink, p.HTML)
	}
}

func TestSendsMultipartMessage(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSNone, Username: "mailer", Password: password, HELO: "app.example.com"})
	if err := s.SendVerificationRequest(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	m := onlyMail(t, srv)
	if m.From != "no-reply@acme.example" || len(m.To) != 1 || m.To[0] != to {
		t.Errorf("envelope = %q -> %q", m.From, m.To)
	}
	if m.User != "mailer" || m.TLS {
		t.Errorf("session user %q, TLS %v; want mailer over plain loopback", m.User, m.TLS)
	}
	p := parse(t, m.Data)
	fromH, err := netmail.ParseAddress(p.Header.Get("From"))
	if err != nil || fromH.Name != "Acme" || fromH.Address != "no-reply@acme.example" {
		t.Errorf("From header = %q", p.Header.Get("From"))
	}
	toH, err := netmail.ParseAddress(p.Header.Get("To"))
	if err != nil || toH.Address != to {
		t.Errorf("To header = %q", p.Header.Get("To"))
	}
	if got := p.Header.Get("Subject"); got != "Sign in to app.example.com" {
		t.Errorf("Subject = %q", got)
	}
	if _, err := p.Header.Date(); err != nil {
		t.Errorf("Date header: %v", err)
	}
	if id := p.Header.Get("Message-Id"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, ">") {
		t.Errorf("Message-ID = %q", id)
	}
	if p.Header.Get("Mime-Version") != "1.0" {
		t.Errorf("MIME-Version = %q", p.Header.Get("Mime-Version"))
	}
	checkContent(t, p, link)
}

func TestFromFallsBackToConfig(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSNone, From: "fallback@acme.example"})
	req := request()
	req.From = ""
	if err := s.SendVerificationRequest(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if m := onlyMail(t, srv); m.From != "fallback@acme.example" {
		t.Errorf("envelope from = %q", m.From)
	}
}

func TestCustomMessage(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSNone, Message: func(r provider.VerificationRequest) provider.EmailMessage {
		return provider.EmailMessage{Subject: "Your Acme link", Text: "Open\n" + r.URL + "\n", HTML: `<a href="` + html.EscapeString(r.URL) + `">Open</a>`}
	}})
	if err := s.SendVerificationRequest(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	p := parse(t, onlyMail(t, srv).Data)
	if p.Header.Get("Subject") != "Your Acme link" {
		t.Errorf("Subject = %q", p.Header.Get("Subject"))
	}
	checkContent(t, p, link)
}

func TestSTARTTLS(t *testing.T) {
	serverTLS, roots := testCert(t)
	srv := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password, TLS: serverTLS})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, Username: "mailer", Password: password, TLSConfig: &tls.Config{RootCAs: roots}})
	if err := s.SendVerificationRequest(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	m := onlyMail(t, srv)
	if !m.TLS || m.User != "mailer" {
		t.Errorf("TLS %v, user %q; want an encrypted, authenticated session", m.TLS, m.User)
	}
	checkContent(t, parse(t, m.Data), link)
}

func TestSTARTTLSUntrustedCertificate(t *testing.T) {
	serverTLS, _ := testCert(t)
	srv := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password, TLS: serverTLS})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, Username: "mailer", Password: password}) // system roots only
	err := s.SendVerificationRequest(context.Background(), request())
	if !errors.Is(err, provider.ErrEmailDelivery) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("err = %v, want a certificate error matching ErrEmailDelivery", err)
	}
	if len(srv.Messages()) != 0 || len(srv.AuthTried()) != 0 {
		t.Error("credentials or message sent over an unverified connection")
	}
}

func TestMandatoryTLSRefusesServerWithoutSTARTTLS(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, Username: "mailer", Password: password}) // TLSMandatory
	err := s.SendVerificationRequest(context.Background(), request())
	if !errors.Is(err, provider.ErrEmailDelivery) || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("err = %v, want a STARTTLS error", err)
	}
	if len(srv.Messages()) != 0 || len(srv.AuthTried()) != 0 {
		t.Error("credentials or message sent in plain text")
	}
	srv.WaitClosed(t) // go-mail leaves it open after this refusal; the sender closes it
}

func TestOpportunisticTLS(t *testing.T) {
	serverTLS, roots := testCert(t)
	withTLS := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password, TLS: serverTLS})
	plain := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password})
	for _, tc := range []struct {
		name    string
		srv     *mailtest.Server
		wantTLS bool
	}{{"offered", withTLS, true}, {"not_offered", plain, false}} {
		t.Run(tc.name, func(t *testing.T) {
			s := sender(t, mail.Config{Host: tc.srv.Host, Port: tc.srv.Port, TLS: mail.TLSOpportunistic, Username: "mailer", Password: password, TLSConfig: &tls.Config{RootCAs: roots}})
			if err := s.SendVerificationRequest(context.Background(), request()); err != nil {
				t.Fatal(err)
			}
			if m := onlyMail(t, tc.srv); m.TLS != tc.wantTLS || m.User != "mailer" {
				t.Errorf("TLS %v, user %q; want TLS %v", m.TLS, m.User, tc.wantTLS)
			}
		})
	}
}

// Without TLS, credentials go only to localhost: 127.0.0.2 is a loopback
// address (on Linux) but not a name the PLAIN and LOGIN mechanisms trust.
func TestNoPlainTextCredentialsToOtherHosts(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password, Listen: "127.0.0.2"})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSOpportunistic, Username: "mailer", Password: password})
	err := s.SendVerificationRequest(context.Background(), request())
	if !errors.Is(err, mail.ErrInsecureAuth) || !errors.Is(err, provider.ErrEmailDelivery) {
		t.Fatalf("err = %v, want ErrInsecureAuth", err)
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("error holds the password: %v", err)
	}
	if got := srv.AuthTried(); len(got) != 0 || len(srv.Messages()) != 0 {
		t.Errorf("credentials sent in plain text (AUTH as %v)", got)
	}
}

func TestImplicitTLS(t *testing.T) {
	serverTLS, roots := testCert(t)
	srv := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password, Implicit: serverTLS})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSImplicit, Username: "mailer", Password: password, TLSConfig: &tls.Config{RootCAs: roots}})
	if err := s.SendVerificationRequest(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	m := onlyMail(t, srv)
	if !m.TLS || m.User != "mailer" {
		t.Errorf("TLS %v, user %q", m.TLS, m.User)
	}
}

func TestWrongPassword(t *testing.T) {
	serverTLS, roots := testCert(t)
	srv := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password, TLS: serverTLS})
	wrong := "not-the-" + password
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, Username: "mailer", Password: wrong, TLSConfig: &tls.Config{RootCAs: roots}})
	err := s.SendVerificationRequest(context.Background(), request())
	if !errors.Is(err, mail.ErrAuthFailed) || !errors.Is(err, provider.ErrEmailDelivery) {
		t.Fatalf("err = %v, want ErrAuthFailed and ErrEmailDelivery", err)
	}
	if !strings.Contains(err.Error(), "535") {
		t.Errorf("error does not give the server's answer: %v", err)
	}
	if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), password) {
		t.Errorf("error holds the password: %v", err)
	}
	if got := srv.AuthTried(); len(got) != 1 || got[0] != "mailer" {
		t.Errorf("AUTH attempts = %v, want one as mailer", got)
	}
	if len(srv.Messages()) != 0 {
		t.Error("message sent after failed AUTH")
	}
	srv.WaitClosed(t)
}

func TestRecipientRejected(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{RejectRcpt: to})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSNone})
	err := s.SendVerificationRequest(context.Background(), request())
	if !errors.Is(err, mail.ErrRecipientRejected) || !errors.Is(err, provider.ErrEmailDelivery) {
		t.Fatalf("err = %v, want ErrRecipientRejected", err)
	}
	if !strings.Contains(err.Error(), "550") {
		t.Errorf("error does not give the server's answer: %v", err)
	}
	if errors.Is(err, mail.ErrAuthFailed) || len(srv.Messages()) != 0 {
		t.Errorf("wrong classification or message delivered: %v", err)
	}
}

func TestCancelledContext(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSNone})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.SendVerificationRequest(ctx, request())
	if !errors.Is(err, context.Canceled) || !errors.Is(err, provider.ErrEmailDelivery) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(srv.Messages()) != 0 {
		t.Error("message sent with a cancelled context")
	}
}

// A context that ends in the middle of the exchange ends it, long before
// the connection's own timeout.
func TestContextEndsExchange(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{StallData: true})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSNone, Timeout: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.SendVerificationRequest(ctx, request()) }()
	<-srv.InData() // the server is in DATA and will not answer
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || !errors.Is(err, provider.ErrEmailDelivery) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestConcurrentSends(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{User: "mailer", Pass: password})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSNone, Username: "mailer", Password: password})
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			req := request()
			req.Identifier = fmt.Sprintf("user%d@example.com", i)
			req.URL = fmt.Sprintf("https://app.example.com/auth/callback/email?n=%d", i)
			errs[i] = s.SendVerificationRequest(context.Background(), req)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
	got := map[string]bool{}
	for _, m := range srv.Messages() {
		p := parse(t, m.Data)
		for i := range n {
			if m.To[0] == fmt.Sprintf("user%d@example.com", i) && strings.Contains(p.Text, fmt.Sprintf("?n=%d\n", i)) {
				got[m.To[0]] = true
			}
		}
	}
	if len(got) != n {
		t.Errorf("%d recipients got their own link, want %d", len(got), n)
	}
}

func TestBadRequest(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s := sender(t, mail.Config{Host: srv.Host, Port: srv.Port, TLS: mail.TLSNone})
	cases := map[string]func(*provider.VerificationRequest){
		"no_link":           func(r *provider.VerificationRequest) { r.URL = "" },
		"no_sender":         func(r *provider.VerificationRequest) { r.From = "" },
		"bad_recipient":     func(r *provider.VerificationRequest) { r.Identifier = "not an address" },
		"header_injection":  func(r *provider.VerificationRequest) { r.Identifier = "a@example.com\r\nBcc: b@example.com" },
		"bad_sender":        func(r *provider.VerificationRequest) { r.From = "nobody" },
		"empty_recipient":   func(r *provider.VerificationRequest) { r.Identifier = "" },
		"two_recipients":    func(r *provider.VerificationRequest) { r.Identifier = "a@example.com,b@example.com" },
		"display_name":      func(r *provider.VerificationRequest) { r.Identifier = "Ada <ada@example.com>" },
		"injection_in_from": func(r *provider.VerificationRequest) { r.From = "x@acme.example\r\nBcc: b@example.com" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			req := request()
			mutate(&req)
			if err := s.SendVerificationRequest(context.Background(), req); !errors.Is(err, core.ErrInvalidConfig) {
				t.Errorf("err = %v, want ErrInvalidConfig", err)
			}
		})
	}
	if len(srv.Messages()) != 0 {
		t.Error("a bad request was sent")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	cases := map[string]mail.Config{
		"no_host":           {},
		"blank_host":        {Host: "  "},
		"host_with_path":    {Host: "smtp.example.com/x"},
		"unix_socket":       {Host: "unix:///run/smtp.sock"},
		"port_out_of_range": {Host: "smtp.example.com", Port: 70000},
		"negative_port":     {Host: "smtp.example.com", Port: -1},
		"unknown_policy":    {Host: "smtp.example.com", TLS: mail.TLSPolicy(9)},
		"negative_timeout":  {Host: "smtp.example.com", Timeout: -time.Second},
		"password_no_user":  {Host: "smtp.example.com", Password: password},
		"bad_from":          {Host: "smtp.example.com", From: "not an address"},
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := mail.New(cfg)
			if !errors.Is(err, core.ErrInvalidConfig) || s != nil {
				t.Errorf("New = %v, %v; want ErrInvalidConfig", s, err)
			}
			if err != nil && strings.Contains(err.Error(), password) {
				t.Errorf("error holds the password: %v", err)
			}
		})
	}
	if _, err := mail.SMTP(mail.Config{Host: "smtp.example.com"}); !errors.Is(err, core.ErrInvalidConfig) {
		t.Errorf("SMTP without From: %v", err)
	}
}

func TestSMTPProvider(t *testing.T) {
	p, err := mail.SMTP(mail.Config{Host: "smtp.example.com", From: from, Username: "u", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "email" || p.From != from || p.SendVerificationRequest == nil || p.TokenMaxAge() != provider.DefaultEmailMaxAge {
		t.Errorf("provider = %+v", p)
	}
	if _, err := provider.Validate([]provider.Provider{p}); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestTLSPolicyString(t *testing.T) {
	for p, want := range map[mail.TLSPolicy]string{mail.TLSMandatory: "TLSMandatory", mail.TLSImplicit: "TLSImplicit", mail.TLSOpportunistic: "TLSOpportunistic", mail.TLSNone: "TLSNone", 7: "TLSPolicy(7)"} {
		if p.String() != want {
			t.Errorf("%d.String() = %q", int(p), p.String())
		}
	}
}
