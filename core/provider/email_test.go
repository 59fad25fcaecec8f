package provider

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalizeEmail(t *testing.T) {
	ok := []struct{ in, want string }{
		{"user@example.com", "user@example.com"},
		{"  User.Name+tag@Example.COM \n", "user.name+tag@example.com"},
		{"a@b", "a@b"},
	}
	for _, tc := range ok {
		got, err := NormalizeEmail(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	bad := map[string]string{
		"empty":                "",
		"blank":                "   ",
		"no_at":                "user.example.com",
		"two_ats":              "a@b@example.com",
		"nothing_before_at":    "@example.com",
		"nothing_after_at":     "user@",
		"inner_space":          "us er@example.com",
		"comma_in_domain":      "user@example.com,attacker.com",
		"control_char":         "user\x00@example.com",
		"empty_domain_label":   "user@example..com",
		"leading_dot_domain":   "user@.example.com",
		"bracket_in_domain":    "user@[127.0.0.1]",
		"local_part_too_long":  strings.Repeat("a", 65) + "@example.com",
		"address_too_long":     "a@" + strings.Repeat("b", 253),
		"invalid_utf8":         "user\xff@example.com",
		"newline_inside":       "user@exa\nmple.com",
		"trailing_dot_label":   "user@example.com.",
		"quote_in_domain_part": `user@exa"mple.com`,
	}
	for name, in := range bad {
		t.Run(name, func(t *testing.T) {
			got, err := NormalizeEmail(in)
			if !errors.Is(err, ErrInvalidEmail) {
				t.Errorf("NormalizeEmail(%q) = %q, %v; want ErrInvalidEmail", in, got, err)
			}
		})
	}
}

func TestEmailConfigNormalize(t *testing.T) {
	e := emailOK()
	if got, _ := e.Normalize(" A@B.C"); got != "a@b.c" {
		t.Errorf("default Normalize = %q", got)
	}
	e.NormalizeIdentifier = func(s string) (string, error) { return "custom:" + s, nil }
	if got, _ := e.Normalize("X"); got != "custom:X" {
		t.Errorf("custom Normalize = %q", got)
	}
}

func TestEmailDefaults(t *testing.T) {
	e := Email("a@b.c", sendNothing)
	if e.ID != "email" || e.Name != "Email" || e.MaxAge != DefaultEmailMaxAge || DefaultEmailMaxAge.Hours() != 24 {
		t.Errorf("Email() = %+v", e)
	}
	e.MaxAge = 0
	if e.TokenMaxAge() != DefaultEmailMaxAge {
		t.Errorf("TokenMaxAge with 0 = %v", e.TokenMaxAge())
	}
	c := Credentials(authorizeNobody)
	if c.ID != "credentials" || c.Name != "Credentials" || c.Authorize == nil || c.Common().Type != TypeCredentials {
		t.Errorf("Credentials() = %+v", c)
	}
	p := Passkey()
	if p.ID != "passkey" || p.UserVerification != UserVerificationPreferred || p.Common().Type != TypeWebAuthn {
		t.Errorf("Passkey() = %+v", p)
	}
}

// TestVerificationEmailCodeWording: a second factor's code is the one
// thing to enter (no "Or"), in the plain text and the HTML alike; a
// sign-in code is the alternative to the link in both.
func TestVerificationEmailCodeWording(t *testing.T) {
	for _, tc := range []struct {
		purpose   Purpose
		want, not string
	}{
		{PurposeSecondFactor, "Enter this code in the browser where you are signing in: ", "Or enter"},
		{PurposeSignIn, "Or enter this code in the browser where you asked for it: ", "Enter this code in the browser where you are signing in"},
	} {
		m := VerificationEmail(VerificationRequest{URL: "https://example.com/auth/signin", Code: "123456", Purpose: tc.purpose})
		for part, body := range map[string]string{"text": m.Text, "HTML": m.HTML} {
			if !strings.Contains(body, tc.want) || strings.Contains(body, tc.not) || !strings.Contains(body, "123456") {
				t.Errorf("%s e-mail, %s body: want %q and the code, not %q:\n%s", tc.purpose, part, tc.want, tc.not, body)
			}
		}
	}
}
