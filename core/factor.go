package core

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"time"
)

// FactorType is the kind of a [Factor]: what proves it and what its Secret
// holds. Adapters store it as given and never interpret it; core/auth
// knows the types below. A type is 1 to [MaxFactorType] bytes of a-z, 0-9,
// '_' and '-'.
type FactorType string

// The factor types core/auth writes.
const (
	// FactorTOTP is an authenticator app (RFC 6238). Secret is the TOTP
	// key sealed by the library (never in clear); Step is the last time
	// step whose code was accepted, so that a code is accepted once.
	FactorTOTP FactorType = "totp"
	// FactorRecoveryCodes is a set of one-time recovery codes. Secret
	// holds the hashes of the codes not yet used; using one replaces it
	// with the set without that hash.
	FactorRecoveryCodes FactorType = "recovery"
	// FactorEmail is a one-time code sent to the user's verified e-mail
	// address. Secret is empty.
	FactorEmail FactorType = "email"
	// FactorPasskey is a passkey (a WebAuthn credential the user
	// registered) used as a second factor with user verification. Secret
	// is the credential id, base64url-encoded as in [Authenticator].
	FactorPasskey FactorType = "passkey"
	// FactorTrustedDevice is a browser the user chose to trust: a second
	// factor is not asked for there until the trust ends. Secret holds a
	// hash of the key kept in that browser's cookie. Not a way to sign
	// in on its own: it only skips the second factor.
	FactorTrustedDevice FactorType = "device"
)

// Limits of a [Factor]'s fields, which every adapter can store.
const (
	// MaxFactorType is the most bytes of a [FactorType].
	MaxFactorType = 32
	// MaxFactorName is the most bytes of [Factor.Name].
	MaxFactorName = 256
	// MaxFactorSecret is the most bytes of [Factor.Secret].
	MaxFactorSecret = 4096
)

// Valid reports whether t can be stored: 1 to [MaxFactorType] bytes of
// a-z, 0-9, '_' and '-'.
func (t FactorType) Valid() bool {
	if t == "" || len(t) > MaxFactorType {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Factor is a way a user proves who they are beyond the first sign-in
// step: an authenticator app, recovery codes, a passkey, an e-mail code,
// or a trusted browser. A user has any number; (UserID, ID) names one, and
// ID alone is unique.
//
// Adapters store every field as given and compare Secret as bytes; what
// Secret means is the library's (see the [FactorType] constants). It is
// never logged ([Factor.LogValue]).
type Factor struct {
	// ID identifies the factor; the library assigns it (a random UUID).
	ID string
	// UserID is the id of the owning user.
	UserID string
	// Type is the kind of factor.
	Type FactorType
	// Name is the label the user gave it ("Phone", "YubiKey"), or "".
	Name string
	// Secret is the factor's data, opaque to adapters, at most
	// [MaxFactorSecret] bytes: a sealed key, hashes, a credential id. nil
	// and empty are the same: none.
	Secret []byte
	// Step is a number the library advances with each use: a TOTP
	// factor's last accepted time step. Not negative.
	Step int64
	// CreatedAt is when the factor was added.
	CreatedAt time.Time
	// LastUsedAt is when the factor was last used, after the Unix epoch;
	// zero when never. (Key-value layouts keep 0 for never.)
	LastUsedAt time.Time
}

// LogValue is what [log/slog] records of a factor: everything but its
// secret.
func (f Factor) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", f.ID),
		slog.String("userId", f.UserID),
		slog.String("type", string(f.Type)),
		slog.String("name", f.Name),
		slog.Int64("step", f.Step),
		slog.Bool("hasSecret", len(f.Secret) > 0),
	)
}

// Clone returns a deep copy of f, sharing no memory with it.
func (f Factor) Clone() Factor {
	f.Secret = bytes.Clone(f.Secret)
	return f
}

// Normalize returns a deep copy of f as adapters store it: its times
// truncated to [TimePrecision] in UTC (a zero LastUsedAt stays zero) and
// an empty Secret as nil.
func (f Factor) Normalize() Factor {
	f = f.Clone()
	if len(f.Secret) == 0 {
		f.Secret = nil
	}
	f.CreatedAt = NormalizeTime(f.CreatedAt)
	f.LastUsedAt = normalizeOptionalTime(f.LastUsedAt)
	return f
}

// Validate reports whether f can be created: its ids are set, its type is
// valid, its step is not negative, its creation time is set, its last use
// is zero or after the Unix epoch, and its name and secret are within
// [MaxFactorName] and [MaxFactorSecret].
func (f *Factor) Validate() error {
	return firstBroken(MethodCreateFactor,
		rule{f.ID == "", "id", notEmpty},
		rule{f.UserID == "", "userId", notEmpty},
		rule{!f.Type.Valid(), "type", "must be 1 to 32 bytes of a-z, 0-9, '_' and '-', not " + quote(string(f.Type))},
		rule{len(f.Name) > MaxFactorName, "name", "must be at most 256 bytes"},
		rule{len(f.Secret) > MaxFactorSecret, "secret", "must be at most 4096 bytes"},
		rule{f.Step < 0, "step", "must not be negative"},
		rule{f.CreatedAt.IsZero(), "createdAt", mustBeSet},
		rule{!lastUsedOK(f.LastUsedAt), "lastUsedAt", lastUsedReason})
}

// lastUsedReason is why a [Factor.LastUsedAt] is refused.
const lastUsedReason = "must be zero (never) or after the Unix epoch"

// lastUsedOK reports whether t can be a [Factor.LastUsedAt]: zero, or
// after the Unix epoch.
func lastUsedOK(t time.Time) bool { return t.IsZero() || t.UnixMilli() > 0 }

// CompareFactors orders factors as listFactorsByUserId returns them: by
// id. It is a comparison function for [slices.SortFunc].
func CompareFactors(x, y Factor) int { return strings.Compare(x.ID, y.ID) }

// FactorCreator is not a spec method: with [FactorsByUserLister],
// [FactorSwapper] and [FactorDeleter] it keeps a user's second factors
// ([Factor]). An adapter offers all four or none; core/auth's second
// factors need all four. deleteUser deletes a user's factors with it.
type FactorCreator interface {
	// CreateFactor stores a new factor for an existing user and returns
	// it as stored. An unknown user gives an error matching
	// [ErrNotFound], an id already stored (for any user) one matching
	// [ErrAlreadyExists]; either way nothing is stored.
	CreateFactor(ctx context.Context, factor Factor) (*Factor, error)
}

// FactorsByUserLister lists a user's factors (see [FactorCreator]).
type FactorsByUserLister interface {
	// ListFactorsByUserID returns every factor of the user, ordered by id
	// ([CompareFactors]). For an unknown user it returns an empty,
	// non-nil list and no error.
	ListFactorsByUserID(ctx context.Context, userID string) ([]Factor, error)
}

// FactorSwapper changes a factor as a compare-and-set (see
// [FactorCreator]), so that a code is accepted once however many
// instances check it at the same moment: of concurrent swaps from the same
// old value, one succeeds.
type FactorSwapper interface {
	// SwapFactor sets the Name, Secret, Step and LastUsedAt of the factor
	// named by (old.UserID, old.ID) to next's if, atomically, its stored
	// Secret and Step equal old's, and returns the factor as stored
	// afterwards; next's other fields are ignored. When the stored Secret
	// or Step differ, it changes nothing and returns the stored factor
	// and an error matching [ErrFactorChanged]. When the user has no
	// factor with that id (another user's id included) it returns nil,
	// nil.
	SwapFactor(ctx context.Context, old, next Factor) (*Factor, error)
}

// FactorDeleter deletes a factor (see [FactorCreator]).
type FactorDeleter interface {
	// DeleteFactor deletes the user's factor with the id and returns it,
	// or nil, nil when the user has none with that id (another user's
	// factor is left in place).
	DeleteFactor(ctx context.Context, userID, id string) (*Factor, error)
}
