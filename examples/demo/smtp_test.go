package main

import (
	"context"
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
	msg, err := m.Wait(ctx, n)
	if err != nil {
		return nil, "", err
	}
	link, err = mailtest.Link(msg.Data)
	return msg.To, link, err
}
