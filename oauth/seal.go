package oauth

import "time"

// sealer seals the check cookies. *jwt.Codec (module
// github.com/authport/authport/jwt, Auth.js's encrypted JWTs) implements
// it: the cookie name is the salt, and the claims are {"value": …}, as
// Auth.js seals them.
type sealer interface {
	Encode(salt string, claims map[string]any, maxAge time.Duration) (string, error)
	Decode(salt string, token string) (map[string]any, error)
}
