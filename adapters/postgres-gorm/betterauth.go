package gormadapter

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/authport/authport/core"
)

// shape is how a schema's tables differ from authport's beyond their
// names: the forms of Better Auth's tables (see [BetterAuth]). The zero
// value is authport's own schema.
type shape struct {
	// boolVerified: the users table's emailVerified column is a NOT NULL
	// boolean, not a nullable timestamp. true reads as [verifiedUnknown],
	// and a user whose EmailVerified is set writes true.
	boolVerified bool
	// requireEmail: the users table's email and name columns are NOT
	// NULL. A user without an e-mail address is refused (an
	// [*core.InputError]) and Migrate leaves the column NOT NULL; a nil
	// name writes "", and "" reads as nil.
	requireEmail bool
	// expiryTime: the accounts table's ExpiresAt column is a timestamp
	// (Better Auth's accessTokenExpiresAt), not seconds since the epoch.
	expiryTime bool
	// baTypes: Migrate gives columns the types Better Auth's own migrate
	// gives them where authport's differ in name only: on SQLite, DATE
	// (or INTEGER, with [SQLiteTimeUnixMilli]) for times and INTEGER for
	// booleans.
	baTypes bool
	// extraTimes are nullable time columns per table that Migrate
	// creates and the adapter neither writes nor reads (Better Auth's
	// account.refreshTokenExpiresAt).
	extraTimes [numTables][]string
}

// withShape is the unexported option that sets the schema's shape.
func withShape(s shape) Option {
	return func(c *config) { c.shape = s }
}

// verifiedUnknown is the time a boolean emailVerified column's true reads
// as: the Unix epoch, 1970-01-01T00:00:00Z, "verified, when unknown".
var verifiedUnknown = time.Unix(0, 0).UTC()

// rowIDAlphabet and rowIDLength are those of the ids Better Auth makes
// (its generateId: 32 characters of a-z, A-Z and 0-9), which fit its
// VARCHAR(36) id columns on MySQL.
const (
	rowIDAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rowIDLength   = 32
)

// newRowID returns a random id for a row id column (see stampCols.id), of
// the form Better Auth's own ids have: 32 characters of [a-zA-Z0-9] (190
// bits), drawn without bias from crypto/rand.
func newRowID() string {
	var out [rowIDLength]byte
	var buf [64]byte
	n := 0
	for n < rowIDLength {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
		for _, b := range buf {
			// 62*4 = 248: bytes below it map evenly onto the alphabet.
			if b < 248 && n < rowIDLength {
				out[n] = rowIDAlphabet[b%62]
				n++
			}
		}
	}
	return string(out[:])
}

// verifiedArg is the bind value of a user's EmailVerified: its time, or
// on a boolean column whether it is set.
func (a *Adapter) verifiedArg(t *time.Time) any {
	if a.d.shape.boolVerified {
		return t != nil
	}
	return a.d.timePtrArg(t)
}

// nameArg is the bind value of a user's name: NULL for nil, or "" where
// the column is NOT NULL.
func (a *Adapter) nameArg(name *string) any {
	if name == nil && a.d.shape.requireEmail {
		return ""
	}
	return nullStr(name)
}

// checkEmail refuses a user without an e-mail address where the users
// table's email column is NOT NULL (Better Auth's).
func (a *Adapter) checkEmail(m core.Method, email string) error {
	if email != "" || !a.d.shape.requireEmail {
		return nil
	}
	return &core.InputError{Method: string(m), Field: "email", Reason: fmt.Sprintf(
		"table %s keeps no user without an e-mail address (its column %q is NOT NULL, as Better Auth's user table has it); give the user an address",
		a.names.Users, a.names.User.Email)}
}

// asStored makes u what reading it back gives on this schema: on Better
// Auth's tables an EmailVerified time becomes [verifiedUnknown] and a name
// of "" becomes nil.
func (a *Adapter) asStored(u *core.User) {
	if a.d.shape.boolVerified && u.EmailVerified != nil {
		u.EmailVerified = new(verifiedUnknown)
	}
	if a.d.shape.requireEmail && u.Name != nil && *u.Name == "" {
		u.Name = nil
	}
}

// expiryArg is the bind value of an account's ExpiresAt (seconds since the
// epoch): the number, or on a timestamp column that second as a time.
func (a *Adapter) expiryArg(m core.Method, exp *int64) (any, error) {
	if !a.d.shape.expiryTime || exp == nil {
		return nullInt(exp), nil
	}
	if *exp < minTime.Unix() || *exp >= maxTime.Unix() {
		return nil, &core.InputError{Method: string(m), Field: "expires_at", Reason: "is outside the years 1 to 9999 that SQL databases store"}
	}
	return a.d.timeArg(time.Unix(*exp, 0)), nil
}

// derivedAccountType is the type of an account read from a table without
// a type column: credentials for the password provider, else oauth.
func derivedAccountType(provider string) core.AccountType {
	if provider == core.PasswordProvider {
		return core.AccountTypeCredentials
	}
	return core.AccountTypeOAuth
}
