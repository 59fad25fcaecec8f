package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/authport/authport/core"
)

// Trusted devices: a browser whose user asked to be trusted
// ([Answer.TrustDevice]) keeps a cookie "<factor id>.<key>" (the key 256
// random bits); the factor record ([core.FactorTrustedDevice]) keeps a
// keyed hash of the key. A sign-in of that user whose context carries the
// cookie ([Client.TrustedDevice]) skips the second factor while the
// record lives and is younger than [SecondFactorOptions.TrustDevice]. The
// trust ends with the record: [Factors.Remove] of the device, or of the
// user's last usable factor (which takes every device along),
// [Factors.RevokeTrustedDevices], and everything that ends all of a user's
// sessions ([Sessions.RevokeAll], [Sessions.RevokeOthers], a password
// reset or change).
//
// The trust is also bound to the factors the user had when it was given
// (trustStands): it holds while one of them is left, judged by creation
// time (a usable factor created no later than the device). A record that
// outlived the removal of the user's last factor (its deletion failed, or
// raced the sign-in that trusted the browser) therefore skips no factor
// enrolled afterwards. A user with no usable factor keeps the trust they
// were given for answering an e-mail code that a requirement asked of
// them (Required, RequiredFor, the callback).

// deviceHash is what the store keeps of a trusted device's key.
func deviceHash(secret, userID, factorID, key string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("authport trusted device\x00" + userID + "\x00" + factorID + "\x00" + key))
	return m.Sum(nil)
}

// trustDevice stores a trusted device for the user and returns its cookie
// value.
func (a *Auth) trustDevice(ctx context.Context, userID string) (string, error) {
	key, err := randomHex(32)
	if err != nil {
		return "", err
	}
	id := core.NewUUID()
	name := clientFrom(ctx).UserAgent
	if len(name) > core.MaxFactorName {
		name = printable(name, core.MaxFactorName)
	}
	if name == "" {
		name = "Browser"
	}
	if _, err := a.createFactor(ctx, core.Factor{ID: id, UserID: userID, Type: core.FactorTrustedDevice, Name: name,
		Secret: deviceHash(a.secrets[0], userID, id, key), CreatedAt: a.now()}); err != nil {
		return "", err
	}
	return id + "." + key, nil
}

// deviceLive reports whether a trusted device's trust lasts at now.
func (a *Auth) deviceLive(f core.Factor, now time.Time) bool {
	return a.sf.TrustDevice > 0 && now.Before(f.CreatedAt.Add(a.sf.TrustDevice))
}

// trustedDevice reports whether ctx carries the cookie of one of the
// user's live trusted devices (factors is the user's list).
func (a *Auth) trustedDevice(ctx context.Context, userID string, factors []core.Factor) bool {
	if a.sf.TrustDevice <= 0 {
		return false
	}
	c, _ := ctx.Value(clientKey{}).(Client)
	id, key, ok := strings.Cut(c.TrustedDevice, ".")
	if !ok || id == "" || len(key) != 64 {
		return false
	}
	if _, err := hex.DecodeString(key); err != nil {
		return false
	}
	now := a.now()
	for _, f := range factors {
		if f.Type != core.FactorTrustedDevice || f.ID != id || f.UserID != userID || !a.deviceLive(f, now) || !trustStands(f, factors) {
			continue
		}
		for _, s := range a.secrets {
			if subtle.ConstantTimeCompare(f.Secret, deviceHash(s, userID, id, key)) == 1 {
				return true
			}
		}
	}
	return false
}

// trustStands reports whether the trusted device's trust still rests on
// the user's factors: the user has a usable factor created no later than
// the device, or has no usable factor at all. A user whose factors were
// all removed, or replaced by factors enrolled since, is asked again.
// Stores keep times at their own precision, rounding both times alike, so
// a factor enrolled in the sign-in that trusted the device stays no
// later than it.
func trustStands(device core.Factor, factors []core.Factor) bool {
	has := false
	for _, f := range factors {
		if !isUsableType(f.Type) {
			continue
		}
		if !f.CreatedAt.After(device.CreatedAt) {
			return true
		}
		has = true
	}
	return !has
}

// revokeDevices deletes every trusted device of the user and reports how
// many were live.
func (a *Auth) revokeDevices(ctx context.Context, userID string) (int, error) {
	factors, err := a.listFactors(ctx, userID)
	if err != nil {
		return 0, err
	}
	n, now := 0, a.now()
	for _, f := range factors {
		if f.Type != core.FactorTrustedDevice {
			continue
		}
		deleted, err := a.deleteFactor(ctx, userID, f.ID)
		if err != nil {
			return n, fmt.Errorf("second factors: ending the trust of the user's devices: %w", err)
		}
		if deleted != nil && a.deviceLive(f, now) {
			n++
		}
	}
	return n, nil
}

// endDeviceTrust ends the user's trusted devices along with their
// sessions, when second factors are on.
func (a *Auth) endDeviceTrust(ctx context.Context, userID string) error {
	if !a.sf.Enabled {
		return nil
	}
	_, err := a.revokeDevices(ctx, userID)
	return err
}
