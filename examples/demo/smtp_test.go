package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// mailbox is a real SMTP server (go-smtp) on loopback, keeping every
// message the demo's mail module delivers to it.
type mailbox struct {
	addr string

	mu      sync.Mutex
	msgs    []capturedMail
	arrived chan struct{} // signalled on every message
}

// capturedMail is one delivered message.
type capturedMail struct {
	To   []string
	Data []byte
}

func startMailbox(t *testing.T) *mailbox {
	t.Helper()
	m := &mailbox{arrived: make(chan struct{}, 16)}
	srv := smtp.NewServer(m)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = time.Minute, time.Minute
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("SMTP listener: %v", err)
	}
	m.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return m
}

// URL is the demo's -smtp value for this server (no TLS: it is loopback).
func (m *mailbox) URL() string { return "smtp://" + m.addr + "?tls=none" }

// count returns how many messages arrived so far.
func (m *mailbox) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.msgs)
}

// waitLink waits for the message number n (from 0) and returns the sign-in
// link of its text part.
func (m *mailbox) waitLink(ctx context.Context, n int) (to []string, link string, err error) {
	for {
		m.mu.Lock()
		if len(m.msgs) > n {
			msg := m.msgs[n]
			m.mu.Unlock()
			link, err := signInLink(msg.Data)
			return msg.To, link, err
		}
		m.mu.Unlock()
		select {
		case <-m.arrived:
		case <-ctx.Done():
			return nil, "", fmt.Errorf("no e-mail number %d arrived at the SMTP server %s: %w", n+1, m.addr, ctx.Err())
		}
	}
}

// signInLink returns the link on a line of its own in the text/plain part
// of a multipart message.
func signInLink(data []byte) (string, error) {
	msg, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("parse the e-mail: %w", err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return "", fmt.Errorf("the e-mail is %q, want multipart (%v)", mt, err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart() // decodes quoted-printable
		if err != nil {
			return "", fmt.Errorf("no text/plain part with a link in the e-mail: %w", err)
		}
		if !strings.HasPrefix(part.Header.Get("Content-Type"), "text/plain") {
			continue
		}
		body, err := io.ReadAll(part)
		if err != nil {
			return "", err
		}
		for line := range strings.Lines(string(body)) {
			if line = strings.TrimSpace(line); strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://") {
				return line, nil
			}
		}
		return "", fmt.Errorf("the text part has no link:\n%s", body)
	}
}

// NewSession implements smtp.Backend.
func (m *mailbox) NewSession(*smtp.Conn) (smtp.Session, error) { return &mailSession{box: m}, nil }

type mailSession struct {
	box *mailbox
	to  []string
}

func (s *mailSession) Reset()        { s.to = nil }
func (s *mailSession) Logout() error { return nil }

func (s *mailSession) Mail(string, *smtp.MailOptions) error { return nil }

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.box.mu.Lock()
	s.box.msgs = append(s.box.msgs, capturedMail{To: s.to, Data: data})
	s.box.mu.Unlock()
	select {
	case s.box.arrived <- struct{}{}:
	default:
	}
	return nil
}
