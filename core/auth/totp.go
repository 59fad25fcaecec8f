package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
)

// TOTP factors: the key is sealed at rest (AES-256-GCM, the key derived
// from the secrets, the factor's id and user id as associated data, so
// that a sealed key copied to another record or user does not open), and
// the factor's Step is the last time step whose code was accepted. A code
// is accepted when its step is above Step and the swap of Step to it
// succeeds: of the same code answered on any number of instances at once,
// one swap wins and the others, reading the factor again, find the step
// used.

// enrollmentAAD binds the sealed enrolment token to its format.
var enrollmentAAD = []byte("authport totp enrolment v1")

// enrollmentClaims is what a TOTP enrolment's token carries.
type enrollmentClaims struct {
	FactorID string `json:"f"`
	UserID   string `json:"u"`
	Pending  string `json:"p,omitempty"`
	Name     string `json:"n"`
	Key      []byte `json:"k"`
	Expires  int64  `json:"x"`
}

// sealEnrollment seals an enrolment's claims into its token.
func (a *Auth) sealEnrollment(e enrollmentClaims) (string, error) {
	plain, err := json.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("second factors: encoding the enrolment: %w", err)
	}
	return a.seal.enrollment.sealString(plain, enrollmentAAD)
}

// openEnrollment opens an enrolment's token and checks its expiry.
func (a *Auth) openEnrollment(token string) (*enrollmentClaims, error) {
	plain, err := a.seal.enrollment.openString(token, enrollmentAAD)
	if err != nil {
		return nil, refused("the enrolment's token does not open")
	}
	var e enrollmentClaims
	if err := json.Unmarshal(plain, &e); err != nil || e.FactorID == "" || e.UserID == "" || len(e.Key) == 0 {
		return nil, refused("the enrolment's token is malformed")
	}
	if !a.now().Before(time.Unix(e.Expires, 0)) {
		return nil, refused("the enrolment expired")
	}
	return &e, nil
}

// totpAAD is the associated data of a TOTP key sealed at rest.
func totpAAD(factorID, userID string) []byte {
	return []byte("authport totp key\x00" + factorID + "\x00" + userID)
}

// sealTOTPKey seals a TOTP key for the factor.
func (a *Auth) sealTOTPKey(key []byte, factorID, userID string) ([]byte, error) {
	return a.seal.totpKey.seal(key, totpAAD(factorID, userID))
}

// openTOTPKey opens a TOTP factor's key; current reports that the newest
// secret sealed it.
func (a *Auth) openTOTPKey(f core.Factor) (key []byte, current bool, err error) {
	return a.seal.totpKey.open(f.Secret, totpAAD(f.ID, f.UserID))
}

// maxSwapRetries bounds the compare-and-set loops of a factor's use: each
// retry follows another request's successful change.
const maxSwapRetries = 64

// checkTOTP accepts code for one of the user's TOTP factors, once: the
// factor's step moves to the code's.
func (a *Auth) checkTOTP(ctx context.Context, userID, code string) error {
	if a.sf.TOTP == nil {
		return refused("TOTP is off")
	}
	if len(code) < 6 || len(code) > 10 {
		return refused("the code has the wrong length")
	}
	return a.spendFactor(ctx, userID, core.FactorTOTP, "the TOTP factor", "the code does not match", "the factor was removed",
		func(f core.Factor) (core.Factor, bool, error) {
			key, current, err := a.openTOTPKey(f)
			if err != nil {
				// Sealed with a secret no longer configured, or altered.
				a.log.WarnContext(ctx, "authport: a TOTP factor's key does not open", "factor", f.ID, "error", err)
				return core.Factor{}, false, nil
			}
			now := a.now()
			step, ok := a.sf.TOTP.Match(key, code, now)
			if !ok {
				return core.Factor{}, false, nil
			}
			if step <= f.Step {
				return core.Factor{}, false, refused("the code was used already")
			}
			next := f
			next.Step, next.LastUsedAt = step, now
			if !current {
				if next.Secret, err = a.sealTOTPKey(key, f.ID, f.UserID); err != nil {
					return core.Factor{}, false, err
				}
			}
			return next, true, nil
		})
}

// spendFactor spends one use of one of the user's factors of type typ
// (what names them in errors): match returns the record that replaces
// the first factor the answer fits (ok false: it does not fit; an error
// ends the use), and the new record is swapped in by compare-and-set.
// When a concurrent use changed the factor first, the factors are read
// and matched again, so that one answer is spent once however many
// requests race it. No factor fitting refuses with noMatch; a fitting
// factor deleted meanwhile refuses with removed, or, when removed is "",
// is read again like a changed one.
func (a *Auth) spendFactor(ctx context.Context, userID string, typ core.FactorType, what, noMatch, removed string,
	match func(core.Factor) (next core.Factor, ok bool, err error)) error {
	for range maxSwapRetries {
		factors, err := a.listFactors(ctx, userID)
		if err != nil {
			return err
		}
		changed := false
		for _, f := range factors {
			if f.Type != typ {
				continue
			}
			next, ok, err := match(f)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			swapped, err := call(a, "second factors", func(s core.FactorSwapper) (*core.Factor, error) {
				return s.SwapFactor(ctx, f, next)
			})
			switch {
			case errors.Is(err, core.ErrFactorChanged):
				changed = true
			case err != nil:
				return err
			case swapped == nil && removed != "":
				return refused(removed)
			case swapped == nil:
				changed = true
			default:
				return nil
			}
			break
		}
		if !changed {
			return refused(noMatch)
		}
	}
	return fmt.Errorf("second factors: %s kept changing (%d tries)", what, maxSwapRetries)
}
