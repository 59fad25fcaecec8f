package betterauth

import (
	"strings"
	"unicode/utf8"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// Better Auth's key names (better-auth 1.7, db/internal-adapter): a
// session's key is its token alone.
const (
	kList         = "active-sessions-"
	kRevoked      = "revoked-sessions-before-"
	kVerification = "verification:"
)

// keys builds the Redis key names of the layout.
type keys struct{ prefix string }

func (k keys) session(token string) string      { return k.prefix + token }
func (k keys) list(userID string) string        { return k.prefix + kList + userID }
func (k keys) revoked(userID string) string     { return k.prefix + kRevoked + userID }
func (k keys) verification(ident string) string { return k.prefix + kVerification + ident }

// checkToken refuses a session token whose key would name a key of
// another kind: Better Auth keys a session by its token alone, so a token
// "verification:x" would be the verification value of x, and one with a
// '|' could be a rate-limit counter (<ip>|<path>). Better Auth's own
// tokens are 32 letters and digits; authport's are base64url.
func checkToken(m core.Method, token string) error {
	switch {
	case token == "":
		return shared.Invalid(m, "sessionToken", "is empty")
	case strings.HasPrefix(token, kList), strings.HasPrefix(token, kRevoked), strings.HasPrefix(token, kVerification):
		return shared.Invalid(m, "sessionToken", "would name another kind's key in Better Auth's Redis layout (its session keys are the bare token)")
	case !utf8.ValidString(token):
		return shared.Invalid(m, "sessionToken", "is not valid UTF-8, which Better Auth's JSON values cannot hold")
	case strings.ContainsRune(token, '|'):
		return shared.Invalid(m, "sessionToken", "has a '|', which would make its key a Better Auth rate-limit counter's (<ip>|<path>)")
	}
	return nil
}
