//go:build authport_consumer

package main

import (
	"context"
	"fmt"

	"github.com/authport/authport/mail"
)

// check configures an SMTP e-mail provider; it needs no network.
func check(context.Context) (string, error) {
	p, err := mail.SMTP(mail.Config{Host: "smtp.example.com", Username: "user", Password: "secret", From: "Example <no-reply@example.com>"})
	if err != nil {
		return "", err
	}
	if p.SendVerificationRequest == nil {
		return "", fmt.Errorf("the SMTP provider %q sends nothing", p.ID)
	}
	return fmt.Sprintf("configured the SMTP e-mail provider %q", p.ID), nil
}
