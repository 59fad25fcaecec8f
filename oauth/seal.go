package oauth

import (
	"time"

	"github.com/authport/authport/jwt"
)

// sealer seals the check cookies. *jwt.Codec (Auth.js's encrypted JWTs)
// implements it: the cookie name is the salt, and the claims are
// {"value": …}, as Auth.js seals them.
type sealer interface {
	Encode(salt string, claims map[string]any, maxAge time.Duration) (string, error)
	Decode(salt string, token string) (map[string]any, error)
}

// newSealer returns the Auth.js JWT codec for the secrets (newest first),
// reading the time from now.
func newSealer(now func() time.Time, secrets ...string) (sealer, error) {
	c, err := jwt.NewCodec(secrets...)
	if err != nil {
		return nil, err
	}
	return c.WithClock(now), nil
}
