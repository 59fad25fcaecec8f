// Package totp implements authport's time-based one-time passwords (RFC
// 6238, the codes of authenticator apps) with github.com/pquerna/otp: a
// [*TOTP] is the auth.TOTP of auth.Config.SecondFactors.TOTP. It makes
// keys (the secret, its base32 text, the otpauth:// URI and a PNG QR
// code to scan) and checks codes, reporting the time step a code matched
// so that core/auth accepts each step once per user (RFC 6238 §5.2).
//
// The defaults are RFC 6238's and every authenticator app's: HMAC-SHA-1,
// six digits, a 30-second period and 160-bit keys; codes are accepted one
// step either side of now (the skew), for clocks that drift and codes
// typed as they change. Every step of the window is computed and compared
// in constant time, whether or not an earlier one matched.
package totp

import (
	"bytes"
	"crypto/subtle"
	"encoding/base32"
	"fmt"
	"image/png"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// Defaults and bounds of [Options].
const (
	// DefaultDigits is the length of a code (RFC 6238's and every app's).
	DefaultDigits = 6
	// DefaultPeriod is how long a code lasts: one time step.
	DefaultPeriod = 30 * time.Second
	// DefaultSkew is how many steps before and after now a code may be
	// from.
	DefaultSkew = 1
	// DefaultQRSize is the width and height of the QR code, in pixels.
	DefaultQRSize = 256

	// MaxSkew is the largest skew allowed: each step more either side
	// lets a guess match two more codes.
	MaxSkew = 3
	// KeySize is the size of the keys NewKey makes: 160 bits, the size of
	// SHA-1's output (RFC 4226 §4 recommends it).
	KeySize = 20
	// MinKeySize is the smallest key Match accepts: 128 bits (RFC 4226
	// §4's minimum). A shorter stored key is refused, not used.
	MinKeySize = 16
)

// Options configures [New]. The zero value is RFC 6238's defaults.
type Options struct {
	// Digits is the length of a code: 6, 7 or 8; zero means
	// [DefaultDigits]. Most apps show 6 whatever the URI says; change it
	// only for apps known to honour it.
	Digits int
	// Period is the time step: whole seconds from 1 s to 5 minutes; zero
	// means [DefaultPeriod].
	Period time.Duration
	// Skew is how many steps before and after the current one are
	// accepted, from 0 to [MaxSkew]; nil means [DefaultSkew] (a pointer,
	// because 0 is a valid skew: only the current step).
	Skew *int
	// QRSize is the width and height of [auth.TOTPKey.QRCode] in pixels,
	// from 64 to 1024; zero means [DefaultQRSize].
	QRSize int
}

// TOTP makes TOTP keys and checks codes; it implements auth.TOTP. It is
// safe for concurrent use.
type TOTP struct {
	digits otp.Digits
	period uint
	skew   int
	qrSize int
}

var _ auth.TOTP = (*TOTP)(nil)

// New checks o and returns a TOTP. Errors match [core.ErrInvalidConfig].
func New(o Options) (*TOTP, error) {
	t := &TOTP{digits: DefaultDigits, period: uint(DefaultPeriod / time.Second), skew: DefaultSkew, qrSize: DefaultQRSize}
	if o.Digits != 0 {
		if o.Digits < 6 || o.Digits > 8 {
			return nil, fmt.Errorf("%w: totp: Digits %d is not 6, 7 or 8", core.ErrInvalidConfig, o.Digits)
		}
		t.digits = otp.Digits(o.Digits)
	}
	if o.Period != 0 {
		if o.Period < time.Second || o.Period > 5*time.Minute || o.Period%time.Second != 0 {
			return nil, fmt.Errorf("%w: totp: Period %v is not a whole number of seconds from 1s to 5m", core.ErrInvalidConfig, o.Period)
		}
		t.period = uint(o.Period / time.Second)
	}
	if o.Skew != nil {
		if *o.Skew < 0 || *o.Skew > MaxSkew {
			return nil, fmt.Errorf("%w: totp: Skew %d is not from 0 to %d", core.ErrInvalidConfig, *o.Skew, MaxSkew)
		}
		t.skew = *o.Skew
	}
	if o.QRSize != 0 {
		if o.QRSize < 64 || o.QRSize > 1024 {
			return nil, fmt.Errorf("%w: totp: QRSize %d is not from 64 to 1024", core.ErrInvalidConfig, o.QRSize)
		}
		t.qrSize = o.QRSize
	}
	return t, nil
}

// Digits returns the length of a code.
func (t *TOTP) Digits() int { return int(t.digits) }

// Period returns the time step.
func (t *TOTP) Period() time.Duration { return time.Duration(t.period) * time.Second }

// Skew returns how many steps either side of now are accepted.
func (t *TOTP) Skew() int { return t.skew }

// NewKey makes a new random 160-bit key for the user shown as account at
// the site shown as issuer (neither may be empty, nor hold a colon, which
// the URI's label uses as its separator). It returns the key, its base32
// text (unpadded, as apps take it), the otpauth:// URI with the issuer,
// algorithm, digits and period, and the URI as a PNG QR code
// ([Options.QRSize] pixels square). Errors match [core.ErrInvalidInput],
// or are the system's random source failing.
func (t *TOTP) NewKey(issuer, account string) (auth.TOTPKey, error) {
	for name, v := range map[string]string{"issuer": issuer, "account": account} {
		if v == "" || strings.ContainsAny(v, ":\x00") || len(v) > 256 {
			return auth.TOTPKey{}, fmt.Errorf("%w: totp: the %s must be 1 to 256 bytes without a colon", core.ErrInvalidInput, name)
		}
	}
	key, err := totp.Generate(totp.GenerateOpts{
		Issuer:      issuer,
		AccountName: account,
		Period:      t.period,
		SecretSize:  KeySize,
		Digits:      t.digits,
		Algorithm:   otp.AlgorithmSHA1,
	})
	if err != nil {
		return auth.TOTPKey{}, fmt.Errorf("totp: new key: %w", err)
	}
	text := key.Secret()
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(text)
	if err != nil {
		return auth.TOTPKey{}, fmt.Errorf("totp: new key: the generated secret is not base32: %w", err)
	}
	img, err := key.Image(t.qrSize, t.qrSize)
	if err != nil {
		return auth.TOTPKey{}, fmt.Errorf("totp: QR code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return auth.TOTPKey{}, fmt.Errorf("totp: QR code: %w", err)
	}
	return auth.TOTPKey{Secret: secret, Text: text, URI: key.URL(), QRCode: buf.Bytes()}, nil
}

// Match reports the time step at which key gives code: a step (Unix
// seconds / period) within the skew of now's. Every step of the window
// is computed and compared in constant time, and the search does not stop
// at a match; when several steps give the code (a collision of two
// codes), the latest is reported, so that the same code always reports
// the same step and a caller that accepts each step once refuses it the
// second time.
//
// ok is false for a code of the wrong length or with anything but ASCII
// digits (surrounding spaces included: trim what a person typed first),
// for a key shorter than [MinKeySize], and for a code no step of the
// window gives. Steps before the Unix epoch are never matched. Match
// never panics.
func (t *TOTP) Match(key []byte, code string, now time.Time) (step int64, ok bool) {
	if len(code) != int(t.digits) || len(key) < MinKeySize {
		return 0, false
	}
	for i := 0; i < len(code); i++ {
		if code[i] < '0' || code[i] > '9' {
			return 0, false
		}
	}
	secret := base32.StdEncoding.EncodeToString(key)
	opts := hotp.ValidateOpts{Digits: t.digits, Algorithm: otp.AlgorithmSHA1}
	current := floorDiv(now.Unix(), int64(t.period))
	found := 0
	for s := current - int64(t.skew); s <= current+int64(t.skew); s++ {
		if s < 0 {
			continue
		}
		// The counter of step s, exactly: totp.GenerateCodeCustom takes a
		// time and divides it as a float64, which is hotp's counter for
		// the same step.
		want, err := hotp.GenerateCodeCustom(secret, uint64(s), opts)
		if err != nil {
			return 0, false
		}
		m := subtle.ConstantTimeCompare([]byte(want), []byte(code))
		// step = s where this step matched, kept otherwise, without a
		// branch on the comparison.
		step = int64(subtle.ConstantTimeSelect(m, 1, 0))*s + int64(subtle.ConstantTimeSelect(m, 0, 1))*step
		found |= m
	}
	if found != 1 {
		return 0, false
	}
	return step, true
}

// floorDiv is a / b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
