package provider

import (
	"context"
	"fmt"
	"net/mail"
	"time"

	"github.com/authport/authport/core/password"
)

// TypePassword is the type of the password provider ([PasswordConfig]):
// an e-mail address (or username) and a password that authport hashes and
// keeps itself, in a password account ([core.AccountTypeCredentials]).
// Not one of SPEC §5.1's types: Auth.js has no such provider.
const TypePassword Type = "password"

// Defaults of [PasswordConfig].
const (
	// DefaultPasswordLinkMaxAge is how long a verification or reset link
	// works when [PasswordConfig.LinkMaxAge] is zero.
	DefaultPasswordLinkMaxAge = time.Hour
	// DefaultCodeMaxAge is how long a one-time code works when
	// [PasswordConfig.CodeMaxAge] (or [EmailConfig.CodeMaxAge]) is zero.
	DefaultCodeMaxAge = 10 * time.Minute
	// DefaultCodeAttempts is how many codes may be tried for one address
	// and purpose within a code's lifetime when the config's CodeAttempts
	// is zero; after that the codes of that address are dead.
	DefaultCodeAttempts = 5
)

// Purpose says what a [VerificationRequest] is for: which e-mail to send.
type Purpose string

// The purposes of the e-mails authport sends.
const (
	// PurposeSignIn is an e-mail sign-in link (the zero value).
	PurposeSignIn Purpose = ""
	// PurposeVerifyEmail proves the address of a password sign-up.
	PurposeVerifyEmail Purpose = "verify-email"
	// PurposeResetPassword resets a forgotten password.
	PurposeResetPassword Purpose = "reset-password"
	// PurposeAccountExists tells the owner of an address that someone
	// signed up with it again (the sign-up answered as for a new address):
	// it carries a link to the sign-in page and no token.
	PurposeAccountExists Purpose = "account-exists"
	// PurposeSecondFactor carries a one-time code that answers a second
	// factor (a sign-in waiting for it, or a re-authentication): Code is
	// set, Token is empty, and URL is the sign-in page.
	PurposeSecondFactor Purpose = "second-factor"
)

// PasswordConfig configures password sign-in: sign-up, sign-in by e-mail
// address (or username), e-mail verification, forgotten and changed
// passwords. Build it with [Password]. The user's password hash lives in a
// password account (type [core.AccountTypeCredentials], provider
// [core.PasswordProvider], provider account id the user's id) on adapters
// that offer swapPasswordHash.
type PasswordConfig struct {
	// ID identifies the provider; "password" by default ([Password]).
	ID string
	// Name is shown on the default sign-in page.
	Name string
	// From is the sender of the verification and reset e-mails.
	// Required.
	From string
	// SendVerificationRequest sends the verification, reset and
	// "account exists" e-mails; [VerificationRequest.Purpose] says which.
	// It has the e-mail provider's signature, so the same sender serves
	// both (module github.com/authport/authport/mail's Sender, whose
	// default message is [VerificationEmail]). Required.
	SendVerificationRequest func(ctx context.Context, req VerificationRequest) error
	// Hasher hashes and verifies passwords; nil means Argon2id with RFC
	// 9106's parameters ([password.RFC9106Params]). Wrap it with
	// [password.WithVerifiers] to accept (and upgrade) hashes another
	// system wrote; use [password.NewBetterAuthScrypt] while a Better Auth
	// app shares the password accounts.
	Hasher password.Hasher
	// Policy is what a new password must meet; the zero value is NIST SP
	// 800-63B's: 8 to 128 characters, no composition rules. Passwords are
	// hashed as [password.Normalize] returns them (NFKC). Set
	// Policy.Check to refuse breached or common passwords.
	Policy password.Policy
	// AllowUnverifiedSignIn lets a user sign in before proving their
	// address, and a sign-up sign in at once. It gives up the
	// enumeration safety of sign-up: with it, signing up with a taken
	// address is refused, telling the caller that the address has an
	// account. Off by default.
	AllowUnverifiedSignIn bool
	// Usernames lets users sign up and in with a username
	// ([core.NormalizeUsername]) beside or instead of an address. The
	// adapter must offer getUserByUsername. A taken username is refused at
	// sign-up: unlike addresses, usernames are not enumeration-safe.
	Usernames bool
	// Codes puts a 6-digit one-time code beside the link of every
	// verification and reset e-mail. A code works only with the binding of
	// the browser that asked for it (the handler keeps it in a cookie).
	Codes bool
	// LinkMaxAge is how long verification and reset links work; 0 means
	// [DefaultPasswordLinkMaxAge].
	LinkMaxAge time.Duration
	// CodeMaxAge is how long one-time codes work; 0 means
	// [DefaultCodeMaxAge].
	CodeMaxAge time.Duration
	// CodeAttempts is how many codes may be tried for one address and
	// purpose within CodeMaxAge, through the rate limiter; 0 means
	// [DefaultCodeAttempts].
	CodeAttempts int
}

// Password returns the default password provider: id "password", name
// "Password", verification required before the first sign-in, links valid
// an hour, Argon2id, NIST's policy.
func Password(from string, send func(ctx context.Context, req VerificationRequest) error) *PasswordConfig {
	return &PasswordConfig{ID: "password", Name: "Password", From: from, SendVerificationRequest: send}
}

// Common returns the provider's id, name and type ([TypePassword]).
func (c *PasswordConfig) Common() CommonOptions {
	if c == nil {
		return CommonOptions{Type: TypePassword}
	}
	return CommonOptions{ID: c.ID, Name: c.Name, Type: TypePassword}
}

func (c *PasswordConfig) isNil() bool { return c == nil }

func (c *PasswordConfig) clone() Provider { return shallowClone(c) }

// validatePassword checks a password provider and applies its defaults.
func validatePassword(v *validator, c *PasswordConfig) {
	if c.From == "" {
		v.add("From", "required (the sender of the verification and reset e-mails)")
	} else if _, err := mail.ParseAddress(c.From); err != nil {
		v.add("From", fmt.Sprintf("%q is not an e-mail address", c.From))
	}
	if c.SendVerificationRequest == nil {
		v.add("SendVerificationRequest", "required (it sends the verification and reset e-mails)")
	}
	switch {
	case c.LinkMaxAge < 0:
		v.add("LinkMaxAge", "must not be negative")
	case c.LinkMaxAge == 0:
		c.LinkMaxAge = DefaultPasswordLinkMaxAge
	}
	validateCodes(v, &c.CodeMaxAge, &c.CodeAttempts)
	if err := c.Policy.Config(); err != nil {
		v.add("Policy", err.Error())
	}
	if c.Hasher == nil {
		h, err := password.NewArgon2id(password.RFC9106Params())
		if err != nil {
			v.add("Hasher", fmt.Sprintf("the default Argon2id hasher: %v", err))
		} else {
			c.Hasher = h
		}
	}
}

// validateCodes checks a provider's code lifetime and attempt cap and
// applies their defaults.
func validateCodes(v *validator, maxAge *time.Duration, attempts *int) {
	switch {
	case *maxAge < 0:
		v.add("CodeMaxAge", "must not be negative")
	case *maxAge == 0:
		*maxAge = DefaultCodeMaxAge
	}
	switch {
	case *attempts < 0:
		v.add("CodeAttempts", "must not be negative")
	case *attempts == 0:
		*attempts = DefaultCodeAttempts
	}
}
