package auth

import (
	"context"
	"errors"
	"time"

	"github.com/authport/authport/core"
)

// This file is the public surface of second factors and step-up. The
// bodies marked "skeleton" are being written; the signatures are fixed.

// SecondFactorOptions configures second factors ([Config.SecondFactors]).
// The zero value turns them off: no factor can be enrolled and no sign-in
// asks for one.
type SecondFactorOptions struct {
	// Enabled lets users enrol second factors ([Auth.Factors]); a user
	// with at least one ([core.FactorTOTP], [core.FactorRecoveryCodes]
	// alone does not count, [core.FactorPasskey], [core.FactorEmail]) is
	// asked for one at every sign-in, after the first factor and before
	// the session: the sign-in ends in a [PendingSignIn]. It needs the
	// adapter's factor methods ([core.FactorMethods]).
	Enabled bool
	// Required asks every user for a second factor. A user without one
	// enrols TOTP to finish signing in ([Factors.StartTOTP] with the
	// pending sign-in), or answers an e-mail code when EmailCode is set
	// and the address is verified. [Callbacks.SignIn] can ask it of one
	// user ([SignInDecision.RequireSecondFactor]) whatever this says.
	Required bool
	// TOTP makes and checks authenticator-app codes (RFC 6238); nil
	// leaves TOTP out. Module github.com/authport/authport/totp provides
	// one.
	TOTP TOTP
	// Issuer names the site in authenticator apps; "" means the host of
	// [Config.BaseURL].
	Issuer string
	// EmailCode offers a code sent to the user's verified address as a
	// factor. It needs an e-mail or password provider (their sender
	// delivers it).
	EmailCode bool
	// PendingMaxAge is how long a pending sign-in waits for its second
	// factor; zero means [DefaultPendingMaxAge].
	PendingMaxAge time.Duration
	// Attempts caps the wrong answers of one pending sign-in, and of one
	// user across pending sign-ins within PendingMaxAge, through
	// [Config.RateLimiter]; zero means [DefaultFactorAttempts].
	Attempts int
	// TrustDevice is how long a browser the user chose to trust skips the
	// second factor ([Answer.TrustDevice]); zero turns trusted devices
	// off. Ending the user's sessions ends the trust too.
	TrustDevice time.Duration
}

// Defaults of [SecondFactorOptions].
const (
	DefaultPendingMaxAge  = 5 * time.Minute
	DefaultFactorAttempts = 5
)

// TOTP is what core/auth needs of an RFC 6238 implementation. Module
// github.com/authport/authport/totp implements it with
// github.com/pquerna/otp (core requires nothing outside the Go project).
type TOTP interface {
	// NewKey makes a new key for the user shown as account, at the site
	// shown as issuer.
	NewKey(issuer, account string) (TOTPKey, error)
	// Match reports the time step (seconds since the epoch / period) at
	// which key gives code, searching the steps within the allowed skew
	// of now, comparing in constant time. ok is false for a code of the
	// wrong shape or one no step in the window gives.
	Match(key []byte, code string, now time.Time) (step int64, ok bool)
}

// TOTPKey is a new TOTP key, as [TOTP.NewKey] makes it.
type TOTPKey struct {
	// Secret is the raw key.
	Secret []byte
	// Text is the key as a person types it (base32).
	Text string
	// URI is the otpauth:// URI an authenticator app scans.
	URI string
	// QRCode is a PNG of URI as a QR code.
	QRCode []byte
}

// PendingSignIn is a sign-in whose first factor passed and that waits for
// a second ([SignIn.Pending]): no session exists yet. It is single-use
// (of any number of answers raced on any number of instances, one makes a
// session), expires at Expires, and is bound to the browser or client
// that holds Token.
type PendingSignIn struct {
	// Token is the sealed pending sign-in, to keep in an HttpOnly cookie
	// (browsers) or give the client (APIs); it is given back with every
	// answer. It reveals nothing to its holder.
	Token string
	// Expires is when it can no longer be answered.
	Expires time.Time
	// Factors are the factor types the user can answer with, in the order
	// to offer them.
	Factors []core.FactorType
	// Enroll reports that the user has no factor yet and must enrol TOTP
	// to finish ([SecondFactorOptions.Required]).
	Enroll bool
}

// Answer is a second factor given to finish a pending sign-in or to
// re-authenticate.
type Answer struct {
	// Type is the factor answered with: [core.FactorTOTP],
	// [core.FactorRecoveryCodes] or [core.FactorEmail] (passkeys answer
	// through [Factors.VerifyPasskey]).
	Type core.FactorType
	// Code is the code typed.
	Code string
	// Enrollment is the token of [Factors.StartTOTP] when a pending
	// sign-in enrols TOTP to finish ([PendingSignIn.Enroll]).
	Enrollment string
	// TrustDevice asks to skip the second factor on this browser for
	// [SecondFactorOptions.TrustDevice]; [SignIn.TrustedDevice] is then
	// the cookie value to keep.
	TrustDevice bool
}

// FactorInfo is what a user sees of one of their factors: never its
// secret.
type FactorInfo struct {
	ID         string
	Type       core.FactorType
	Name       string
	CreatedAt  time.Time
	LastUsedAt time.Time
	// Remaining is how many recovery codes are left
	// ([core.FactorRecoveryCodes]); 0 for the other types.
	Remaining int
}

// TOTPEnrollment is a TOTP key offered to a user, not active until a code
// from it is confirmed ([Factors.ConfirmTOTP]).
type TOTPEnrollment struct {
	// Key is the key to show: its Text, URI and QR code.
	Key TOTPKey
	// Token carries the key, sealed, to the confirmation; it expires
	// after [SecondFactorOptions.PendingMaxAge].
	Token string
}

// Enrolled is the result of a confirmed enrolment.
type Enrolled struct {
	Factor FactorInfo
	// RecoveryCodes are new recovery codes, made with the user's first
	// factor: show them once. nil when the user had some already.
	RecoveryCodes []string
}

// Factors manages second factors and answers pending sign-ins; see
// [SecondFactorOptions]. Get it from [Auth.Factors].
type Factors struct{ a *Auth }

// Factors returns the second-factor operations.
func (a *Auth) Factors() Factors { return Factors{a} }

// errSkeleton is returned by the operations not written yet.
var errSkeleton = errors.New("second factors: not implemented yet")

// List returns the user's factors (trusted devices included), by creation
// time.
func (f Factors) List(ctx context.Context, userID string) ([]FactorInfo, error) {
	return nil, errSkeleton // skeleton
}

// StartTOTP offers the user a new TOTP key. pendingToken is "" for a
// signed-in user (userID set), or the pending sign-in's token when it
// must enrol to finish (userID "").
func (f Factors) StartTOTP(ctx context.Context, userID, pendingToken, name string) (*TOTPEnrollment, error) {
	return nil, errSkeleton // skeleton
}

// ConfirmTOTP activates the key of enrollmentToken for the signed-in user
// once code is right for it. The first factor a user enrols comes with
// recovery codes.
func (f Factors) ConfirmTOTP(ctx context.Context, userID, enrollmentToken, code string) (*Enrolled, error) {
	return nil, errSkeleton // skeleton
}

// NewRecoveryCodes replaces the user's recovery codes with ten new ones,
// returned once; the old ones stop working.
func (f Factors) NewRecoveryCodes(ctx context.Context, userID string) ([]string, error) {
	return nil, errSkeleton // skeleton
}

// AddPasskey makes the user's passkey with the credential id a second
// factor.
func (f Factors) AddPasskey(ctx context.Context, userID, credentialID, name string) (*FactorInfo, error) {
	return nil, errSkeleton // skeleton
}

// AddEmail makes a code sent to the user's verified address a second
// factor ([SecondFactorOptions.EmailCode]).
func (f Factors) AddEmail(ctx context.Context, userID string) (*FactorInfo, error) {
	return nil, errSkeleton // skeleton
}

// Remove deletes the user's factor. Removing the last factor of a user
// who must have one is refused with an error matching
// [core.ErrInvalidInput]; another user's factor id is not found.
func (f Factors) Remove(ctx context.Context, userID, factorID string) error {
	return errSkeleton // skeleton
}

// RevokeTrustedDevices ends the trust of every browser of the user and
// reports how many it ended.
func (f Factors) RevokeTrustedDevices(ctx context.Context, userID string) (int, error) {
	return 0, errSkeleton // skeleton
}

// Pending reads a pending sign-in's token: what it can be answered with.
// An expired, used or forged token is refused with [CodeSecondFactor].
func (f Factors) Pending(ctx context.Context, pendingToken string) (*PendingSignIn, error) {
	return nil, errSkeleton // skeleton
}

// SendEmailCode sends a code to the pending user's verified address.
func (f Factors) SendEmailCode(ctx context.Context, pendingToken string) error {
	return errSkeleton // skeleton
}

// Verify answers a pending sign-in: on success the sign-in completes as
// the first factor would have (session, events, JWT claims) and the
// pending sign-in is used up.
func (f Factors) Verify(ctx context.Context, pendingToken string, answer Answer) (*SignIn, error) {
	return nil, errSkeleton // skeleton
}

// PasskeyCredentials are the credentials a pending user may answer with
// (the assertion's allowed credentials), or those of a signed-in user
// re-authenticating (pendingToken "").
func (f Factors) PasskeyCredentials(ctx context.Context, userID, pendingToken string) ([]core.Authenticator, error) {
	return nil, errSkeleton // skeleton
}

// VerifyPasskey answers a pending sign-in with a passkey assertion the
// caller verified (module passkey): credentialID and counter as in
// [Auth.SignInWithPasskey]; userVerified must be true.
func (f Factors) VerifyPasskey(ctx context.Context, pendingToken, credentialID string, counter int64, userVerified, trustDevice bool) (*SignIn, error) {
	return nil, errSkeleton // skeleton
}

// Authentication is how and when a session's user last proved who they
// are: the session's auth_time, amr and acr.
type Authentication struct {
	// Time is when (auth_time); zero when unknown (a session made before
	// authport recorded it).
	Time time.Time
	// Methods are the RFC 8176 methods proven then (amr): "pwd", "otp",
	// "hwk", "user", "mfa", ….
	Methods []string
	// Level is the assurance level (acr): [LevelSingleFactor] or
	// [LevelMultiFactor].
	Level string
}

// The levels of [Authentication.Level].
const (
	LevelSingleFactor = "urn:authport:acr:1fa"
	LevelMultiFactor  = "urn:authport:acr:mfa"
)

// Authentication returns how the session st was authenticated: with
// database sessions from its token, with JWT sessions from its claims.
func (e Edge) Authentication(st SessionState) Authentication {
	return Authentication{} // skeleton
}

// StepUp is what a sensitive operation requires of the session.
type StepUp struct {
	// MaxAge is how long ago the user may have authenticated; zero means
	// any time.
	MaxAge time.Duration
	// Methods, when set, are the amr values of which at least one must
	// have been proven (e.g. "otp", "hwk").
	Methods []string
	// Level, when set, is the acr required ([LevelMultiFactor]).
	Level string
}

// Satisfied reports whether au meets s at now.
func (s StepUp) Satisfied(au Authentication, now time.Time) bool {
	return false // skeleton
}

// Reauthenticate proves a factor again for the signed-in user (a password,
// or an [Answer]) and returns a fresh sign-in: with database sessions a new
// session replaces current (whose token is deleted), with JWT sessions new
// claims; either way with auth_time now and the methods just proven.
func (f Factors) Reauthenticate(ctx context.Context, userID, current string, password string, answer Answer) (*SignIn, error) {
	return nil, errSkeleton // skeleton
}

// ReauthenticatePasskey is [Factors.Reauthenticate] with a passkey
// assertion the caller verified.
func (f Factors) ReauthenticatePasskey(ctx context.Context, userID, current, credentialID string, counter int64, userVerified bool) (*SignIn, error) {
	return nil, errSkeleton // skeleton
}

// SendReauthCode sends an e-mail code to the signed-in user for
// [Factors.Reauthenticate].
func (f Factors) SendReauthCode(ctx context.Context, userID string) error {
	return errSkeleton // skeleton
}

// SignInWithPasskeyAssertion is [Auth.SignInWithPasskey] told whether the
// authenticator verified its user (the assertion's UV flag): a passkey
// sign-in with user verification is two factors in one (amr "hwk" and
// "user", level [LevelMultiFactor]) and is not asked for a second factor;
// without it the sign-in is one factor like any other.
func (a *Auth) SignInWithPasskeyAssertion(ctx context.Context, providerID, credentialID string, counter int64, userVerified bool, current *core.User) (*SignIn, error) {
	return a.SignInWithPasskey(ctx, providerID, credentialID, counter, current) // skeleton
}
