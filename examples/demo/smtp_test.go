package main

import (
	"context"
	"regexp"
	"testing"

	"github.com/authport/authport/mail/mailtest"
)

// mailbox is a real SMTP server (mailtest) on loopback, keeping every
// message the demo's mail module delivers to it.
type mailbox struct{ *mailtest.Server }

func startMailbox(t *testing.T) *mailbox {
	t.Helper()
	return &mailbox{mailtest.Start(t, mailtest.Options{})}
}

// URL is the demo's -smtp value for this server (no TLS: it is loopback).
func (m *mailbox) URL() string { return "smtp://" + m.Addr() + "?tls=none" }

// count returns how many messages arrived so far.
func (m *mailbox) count() int { return len(m.Messages()) }

// waitLink waits for the message number n (from 0) and returns the sign-in
// link of its text part.
func (m *mailbox) waitLink(ctx context.Context, n int) (to []string, link string, err error) {
	to, link, _, err = m.waitMail(ctx, n)
	return to, link, err
}

// codeRE finds the one-time code in a mail's text part, as
// provider.VerificationEmail writes it.
var codeRE = regexp.MustCompile(`enter this code in the browser where you asked for it: ([0-9]{6})`)

// waitMail waits for the message number n (from 0) and returns its
// recipients, the link of its text part, and the one-time code beside the
// link ("" when it has none).
func (m *mailbox) waitMail(ctx context.Context, n int) (to []string, link, code string, err error) {
	msg, err := m.Wait(ctx, n)
	if err != nil {
		return nil, "", "", err
	}
	text, err := mailtest.Text(msg.Data)
	if err != nil {
		return nil, "", "", err
	}
	if link, err = mailtest.Link(msg.Data); err != nil {
		return nil, "", "", err
	}
	if c := codeRE.FindStringSubmatch(text); c != nil {
		code = c[1]
	}
	return msg.To, link, code, nil
}
