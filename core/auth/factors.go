package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/authport/authport/core"
)

// This file is the public surface of second factors and step-up; the
// pending stage is in pending.go, TOTP in totp.go, recovery codes in
// recovery.go, trusted devices in devices.go, e-mail codes in
// emailcode.go, amr/acr/auth_time in stepup.go, sealing in seal.go.

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
	// pending sign-in), or answers an e-mail code when EmailCode is set,
	// the address is verified and the first factor was not an e-mail
	// sign-in. [Factors.Remove] refuses to remove a user's last usable
	// factor.
	Required bool
	// RequiredFor asks a second factor of the users it returns true for,
	// as Required does of everyone: a policy on the stored user alone
	// (a role, a plan, a field of user.Data), which core/auth asks
	// wherever it needs the answer. It is asked at every sign-in of a
	// user without a usable factor, after the first factor (true: the
	// user enrols or answers an e-mail code, as with Required), and by
	// [Factors.Remove] before it removes a user's last usable factor
	// (true: refused, nothing removed). An error fails closed: the
	// sign-in is refused with [CodeConfiguration], the removal refused
	// with an error matching both [core.ErrInvalidConfig] and the
	// function's own; neither goes ahead as if the answer were false (and
	// the handler never shows the function's error text to the client).
	// It runs on the
	// request's context, must be safe for concurrent use, and must not
	// depend on how the user signs in.
	//
	// Which to use: a requirement that belongs to the user (admins must
	// have a factor) goes here, and then holds at Remove too. One that
	// belongs to the sign-in (this provider, this network, this
	// profile's claims) is [SignInDecision.RequireSecondFactor], returned
	// by [Callbacks.SignIn]: it is decided afresh at each sign-in and is
	// not known at Remove. Required, RequiredFor and the callback add up:
	// a sign-in waits for a second factor when any of them asks one.
	RequiredFor func(ctx context.Context, user core.User) (bool, error)
	// TOTP makes and checks authenticator-app codes (RFC 6238); nil
	// leaves TOTP out. Module github.com/authport/authport/totp provides
	// one.
	TOTP TOTP
	// Issuer names the site in authenticator apps; "" means the host of
	// [Config.BaseURL].
	Issuer string
	// EmailCode offers a code sent to the user's verified address as a
	// factor. It needs an e-mail or password provider (their sender
	// delivers it). It is never offered after an e-mail sign-in (link or
	// code), which proved the mailbox already: a user whose only factor
	// it is signs in another way.
	EmailCode bool
	// PendingMaxAge is how long a pending sign-in waits for its second
	// factor; zero means [DefaultPendingMaxAge].
	PendingMaxAge time.Duration
	// Attempts caps the answers to second factors, through
	// [Config.RateLimiter], each counted before it is checked; zero means
	// [DefaultFactorAttempts]. Two caps hold at once:
	//
	//   - a pending sign-in takes at most Attempts answers, right or
	//     wrong, in its life;
	//   - a user takes at most Attempts answers per PendingMaxAge (a burst
	//     of Attempts, then one more every PendingMaxAge/Attempts), across
	//     pending sign-ins, enrolments and re-authentications, counted
	//     since the user's factors last changed. A right answer changes
	//     them (a TOTP factor's last step, a recovery code, the use count
	//     of a passkey or e-mail factor) and so starts a new budget: a user
	//     who signs in often is never refused. Wrong answers change
	//     nothing and keep spending one budget; once it is spent, answers
	//     are refused unchecked, the right one too.
	//
	// Someone who knows the password thus gets Attempts guesses per
	// PendingMaxAge (with the defaults 5 per 5 minutes, about 1,440 a day:
	// against a TOTP that accepts 3 codes in a million at a time, some
	// 0.4% a day), and Attempts more after each successful sign-in of the
	// user's own. Counting right answers as well would take no guess from
	// them, only refuse the user. A re-authentication with a password
	// alone, or with a passkey that is not a factor, changes no factor and
	// counts like a wrong answer. E-mail codes are capped besides as every
	// one-time code is: Attempts per address within Attempts ×
	// PendingMaxAge.
	Attempts int
	// TrustDevice is how long a browser the user chose to trust skips the
	// second factor ([Answer.TrustDevice]); zero turns trusted devices
	// off. Ending the user's sessions ends the trust too, and so does
	// removing the user's last usable factor; a browser's trust also
	// rests on the factors the user had when it was given: once none of
	// them is left (each removed, or replaced by a factor enrolled
	// since), the browser is asked again.
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

// List returns the user's factors (trusted devices included, those whose
// trust ended or no longer rests on the user's factors left out, see
// [SecondFactorOptions.TrustDevice]), by creation time. It never returns
// a secret.
func (f Factors) List(ctx context.Context, userID string) ([]FactorInfo, error) {
	a := f.a
	if err := a.factorsOn(); err != nil {
		return nil, err
	}
	factors, err := a.listFactors(ctx, userID)
	if err != nil {
		return nil, err
	}
	now := a.now()
	out := make([]FactorInfo, 0, len(factors))
	for _, fa := range factors {
		if fa.Type == core.FactorTrustedDevice && (!a.deviceLive(fa, now) || !trustStands(fa, factors)) {
			continue
		}
		out = append(out, infoOf(fa))
	}
	slices.SortStableFunc(out, func(x, y FactorInfo) int {
		if c := x.CreatedAt.Compare(y.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out, nil
}

// infoOf is what the user sees of a factor.
func infoOf(fa core.Factor) FactorInfo {
	fi := FactorInfo{ID: fa.ID, Type: fa.Type, Name: fa.Name, CreatedAt: fa.CreatedAt, LastUsedAt: fa.LastUsedAt}
	if fa.Type == core.FactorRecoveryCodes {
		fi.Remaining = len(fa.Secret) / recoveryHashSize
	}
	return fi
}

// StartTOTP offers the user a new TOTP key. pendingToken is "" for a
// signed-in user (userID set), or the pending sign-in's token when it
// must enrol to finish (userID "").
//
// Nothing is stored: the key travels, sealed, in the enrolment's token,
// and becomes a factor only when a code from it is confirmed
// ([Factors.ConfirmTOTP], or [Factors.Verify] with
// [Answer.Enrollment]). name is the factor's label ("" for a default).
func (f Factors) StartTOTP(ctx context.Context, userID, pendingToken, name string) (*TOTPEnrollment, error) {
	a := f.a
	if err := a.factorsOn(); err != nil {
		return nil, err
	}
	if a.sf.TOTP == nil {
		return nil, fmt.Errorf("%w: TOTP is off (SecondFactorOptions.TOTP is nil)", core.ErrInvalidConfig)
	}
	name, err := factorName(name, "Authenticator app")
	if err != nil {
		return nil, err
	}
	var pc *pendingClaims
	if pendingToken != "" {
		if pc, err = a.openPending(pendingToken); err != nil {
			return nil, err
		}
		if userID != "" && userID != pc.UserID {
			return nil, refused("the pending sign-in is another user's")
		}
		if !pc.Enroll {
			// The user has a factor: the sign-in answers it, and enrols
			// nothing until it is signed in.
			return nil, refused("the pending sign-in does not enrol")
		}
		userID = pc.UserID
	}
	if userID == "" {
		return nil, fmt.Errorf("%w: StartTOTP needs the signed-in user's id or a pending sign-in's token", core.ErrInvalidInput)
	}
	user, err := a.pendingUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	pendingID := ""
	if pc != nil {
		if err := a.stillEnrolls(ctx, *user); err != nil {
			return nil, err
		}
		pendingID = pc.ID
	}
	key, err := a.sf.TOTP.NewKey(a.sf.Issuer, totpLabel(totpAccount(*user, pc)))
	if err != nil {
		return nil, fmt.Errorf("second factors: making a TOTP key: %w", err)
	}
	if len(key.Secret) == 0 || len(key.Secret) > 128 {
		return nil, fmt.Errorf("second factors: the TOTP implementation made a key of %d bytes", len(key.Secret))
	}
	e := enrollmentClaims{FactorID: core.NewUUID(), UserID: userID, Pending: pendingID, Name: name, Key: key.Secret,
		Expires: a.now().Add(a.sf.PendingMaxAge).Unix()}
	token, err := a.sealEnrollment(e)
	if err != nil {
		return nil, err
	}
	return &TOTPEnrollment{Key: key, Token: token}, nil
}

// totpAccount is the account an authenticator app shows for the user's
// new key. A signed-in user sees their address (else username, name, id).
// A pending sign-in (pc) is held by whoever passed the first factor,
// which may not be the user, so it is shown nothing the first factor did
// not already name: the username when the user has one (usernames are
// chosen to be found), else the address when the first factor was given
// it (an e-mail sign-in, or a password sign-in, which without a username
// can only name the address) or got it from the provider (OAuth/OIDC);
// else the user's id, which says nothing.
func totpAccount(user core.User, pc *pendingClaims) string {
	if pc != nil {
		switch {
		case user.Username != "":
			return user.Username
		case user.Email != "" && slices.ContainsFunc(pc.Methods, func(m string) bool {
			return m == AMREmail || m == AMRPassword || m == AMRFederated
		}):
			return user.Email
		}
		return user.ID
	}
	switch {
	case user.Email != "":
		return user.Email
	case user.Username != "":
		return user.Username
	case user.Name != nil && *user.Name != "":
		return *user.Name
	}
	return user.ID
}

// totpLabel makes an account fit an otpauth:// label: the label's
// separator (a colon) becomes a space, NUL and invalid UTF-8 are dropped,
// and it is cut to 256 bytes on a character's boundary. A user whose
// name is "Dr: Who" enrols as "Dr  Who" instead of failing.
func totpLabel(account string) string {
	account = strings.ToValidUTF8(account, "")
	account = strings.NewReplacer(":", " ", "\x00", "").Replace(account)
	for len(account) > 256 {
		_, size := utf8.DecodeLastRuneInString(account)
		account = account[:len(account)-size]
	}
	if strings.TrimSpace(account) == "" {
		return "user"
	}
	return account
}

// stillEnrolls refuses an enrolment through a pending sign-in made with
// Enroll when the user has a usable factor by now (enrolled since, on
// another browser): the pending sign-in then has a factor to answer, not
// one to add.
func (a *Auth) stillEnrolls(ctx context.Context, user core.User) error {
	factors, err := a.listFactors(ctx, user.ID)
	if err != nil {
		return err
	}
	if _, usable := a.offer(user, factors); usable {
		return refused("the user has a second factor now; the pending sign-in no longer enrols")
	}
	return nil
}

// ConfirmTOTP activates the key of enrollmentToken for the signed-in user
// once code is right for it. The first factor a user enrols comes with
// recovery codes; when they cannot be stored the confirmation fails and
// the factor is removed again (in the background while the store fails),
// so that no factor stands without the codes the user was to be shown.
// The confirming code's time step is recorded, so that the same code
// does not also answer the next sign-in; an enrolment is confirmed once.
func (f Factors) ConfirmTOTP(ctx context.Context, userID, enrollmentToken, code string) (*Enrolled, error) {
	a := f.a
	if err := a.factorsOn(); err != nil {
		return nil, err
	}
	if err := a.countAttempt(ctx, "", userID); err != nil {
		return nil, err
	}
	return a.confirmTOTP(ctx, userID, "", enrollmentToken, code)
}

// confirmTOTP checks code against the enrolment's key and stores the
// factor (and, for the user's first factor, recovery codes). pendingID,
// when set, is the pending sign-in the enrolment must belong to.
func (a *Auth) confirmTOTP(ctx context.Context, userID, pendingID, token, code string) (*Enrolled, error) {
	if a.sf.TOTP == nil {
		return nil, fmt.Errorf("%w: TOTP is off (SecondFactorOptions.TOTP is nil)", core.ErrInvalidConfig)
	}
	e, err := a.openEnrollment(token)
	if err != nil {
		return nil, err
	}
	if e.UserID != userID || pendingID != "" && e.Pending != pendingID {
		return nil, refused("the enrolment is another user's or another sign-in's")
	}
	now := a.now()
	step, ok := a.sf.TOTP.Match(e.Key, code, now)
	if !ok || step < 0 {
		return nil, refused("the code does not match the new key")
	}
	sealed, err := a.sealTOTPKey(e.Key, e.FactorID, userID)
	if err != nil {
		return nil, err
	}
	before, err := a.listFactors(ctx, userID)
	if err != nil {
		return nil, err
	}
	created, err := call(a, "second factors", func(c core.FactorCreator) (*core.Factor, error) {
		return c.CreateFactor(ctx, core.Factor{ID: e.FactorID, UserID: userID, Type: core.FactorTOTP, Name: e.Name,
			Secret: sealed, Step: step, CreatedAt: now, LastUsedAt: now})
	})
	switch {
	case errors.Is(err, core.ErrAlreadyExists):
		return nil, refused("the enrolment was confirmed already")
	case errors.Is(err, core.ErrNotFound):
		return nil, refused("the user is gone")
	case err != nil:
		return nil, err
	}
	out := &Enrolled{Factor: infoOf(*created)}
	// The first usable factor comes with recovery codes: so does one
	// enrolled beside codes left of a last factor whose removal could not
	// take them along (they are replaced, and shown).
	if !slices.ContainsFunc(before, func(fa core.Factor) bool { return fa.Type == core.FactorRecoveryCodes }) ||
		!slices.ContainsFunc(before, func(fa core.Factor) bool { return isUsableType(fa.Type) }) {
		codes, err := a.newRecoveryCodes(ctx, userID)
		if err != nil {
			// The user would have a factor without the recovery codes it
			// comes with, and never see them: the factor goes, so that the
			// enrolment can be confirmed again.
			return nil, a.undoFactor(ctx, userID, created.ID, fmt.Errorf("second factors: making the recovery codes of the first factor: %w", err))
		}
		out.RecoveryCodes = codes
	}
	return out, nil
}

// undoFactor removes the factor a request has just created and then could
// not report to the user (see dropFactor), and returns cause, joined with
// the removal's error if that failed too (the removal is then retried in
// the background, see retryLater). Like dropSession it runs even when ctx
// was cancelled.
func (a *Auth) undoFactor(ctx context.Context, userID, factorID string, cause error) error {
	undo := func(ctx context.Context) error { return a.dropFactor(ctx, userID, factorID) }
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	err := undo(uctx)
	cancel()
	if err != nil {
		go retryLater(context.WithoutCancel(ctx), undo)
		return errors.Join(cause, fmt.Errorf("second factors: removing the new factor %q the user was not told of (retrying in the background for %v): %w", factorID, cleanupRetryWindow, err))
	}
	return cause
}

// dropFactor deletes the user's factor (none is fine) and then, when the
// user has no usable factor left, their recovery codes and trusted
// browsers (dropLeftovers).
func (a *Auth) dropFactor(ctx context.Context, userID, factorID string) error {
	if _, err := a.deleteFactor(ctx, userID, factorID); err != nil {
		return err
	}
	return a.dropLeftovers(ctx, userID)
}

// dropLeftovers deletes the user's recovery codes and trusted devices when
// they have no usable factor: codes that answer a second factor no longer
// asked for, and browsers trusted to skip it, both of which would work
// again once a factor is added.
func (a *Auth) dropLeftovers(ctx context.Context, userID string) error {
	factors, err := a.listFactors(ctx, userID)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(factors, func(fa core.Factor) bool { return isUsableType(fa.Type) }) {
		return nil
	}
	for _, fa := range factors {
		if fa.Type == core.FactorRecoveryCodes || fa.Type == core.FactorTrustedDevice {
			if _, err := a.deleteFactor(ctx, userID, fa.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// NewRecoveryCodes replaces the user's recovery codes with ten new ones,
// returned once; the old ones stop working.
func (f Factors) NewRecoveryCodes(ctx context.Context, userID string) ([]string, error) {
	if err := f.a.factorsOn(); err != nil {
		return nil, err
	}
	return f.a.newRecoveryCodes(ctx, userID)
}

// AddPasskey makes the user's passkey with the credential id a second
// factor. The passkey must be the user's (another user's, or an unknown
// credential, is not found) and not a factor already.
func (f Factors) AddPasskey(ctx context.Context, userID, credentialID, name string) (*FactorInfo, error) {
	a := f.a
	if err := a.factorsOn(); err != nil {
		return nil, err
	}
	name, err := factorName(name, "Passkey")
	if err != nil {
		return nil, err
	}
	if credentialID == "" || len(credentialID) > core.MaxFactorSecret {
		return nil, fmt.Errorf("%w: a credential id is 1 to %d bytes", core.ErrInvalidInput, core.MaxFactorSecret)
	}
	au, err := call(a, "second factors (passkeys)", func(g core.AuthenticatorGetter) (*core.Authenticator, error) {
		return g.GetAuthenticator(ctx, credentialID)
	})
	if err != nil {
		return nil, err
	}
	if au == nil || au.UserID != userID {
		return nil, fmt.Errorf("second factors: passkey %q of user %q: %w", credentialID, userID, core.ErrNotFound)
	}
	factors, err := a.listFactors(ctx, userID)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(factors, func(fa core.Factor) bool {
		return fa.Type == core.FactorPasskey && string(fa.Secret) == credentialID
	}) {
		return nil, fmt.Errorf("second factors: passkey %q is a factor already: %w", credentialID, core.ErrAlreadyExists)
	}
	return a.createFactor(ctx, core.Factor{ID: core.NewUUID(), UserID: userID, Type: core.FactorPasskey, Name: name, Secret: []byte(credentialID), CreatedAt: a.now()})
}

// AddEmail makes a code sent to the user's verified address a second
// factor ([SecondFactorOptions.EmailCode]). A user without a verified
// address is refused ([core.ErrInvalidInput]); one who has the factor
// already gets [core.ErrAlreadyExists].
func (f Factors) AddEmail(ctx context.Context, userID string) (*FactorInfo, error) {
	a := f.a
	if err := a.factorsOn(); err != nil {
		return nil, err
	}
	if !a.sf.EmailCode {
		return nil, fmt.Errorf("%w: e-mail codes are off (SecondFactorOptions.EmailCode)", core.ErrInvalidConfig)
	}
	user, err := a.pendingUser(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("second factors: user %q: %w", userID, core.ErrNotFound)
	}
	if !a.canEmail(*user) {
		return nil, fmt.Errorf("%w: an e-mail code needs a verified e-mail address", core.ErrInvalidInput)
	}
	factors, err := a.listFactors(ctx, userID)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(factors, func(fa core.Factor) bool { return fa.Type == core.FactorEmail }) {
		return nil, fmt.Errorf("second factors: e-mail codes are a factor already: %w", core.ErrAlreadyExists)
	}
	return a.createFactor(ctx, core.Factor{ID: core.NewUUID(), UserID: userID, Type: core.FactorEmail, Name: "E-mail", CreatedAt: a.now()})
}

// createFactor stores a new factor and returns what the user sees of it.
func (a *Auth) createFactor(ctx context.Context, fa core.Factor) (*FactorInfo, error) {
	created, err := call(a, "second factors", func(c core.FactorCreator) (*core.Factor, error) {
		return c.CreateFactor(ctx, fa)
	})
	if err != nil {
		return nil, err
	}
	fi := infoOf(*created)
	return &fi, nil
}

// Remove deletes the user's factor. Removing the last usable factor (TOTP,
// passkey, e-mail) of a user who must have one is refused with an error
// matching [core.ErrInvalidInput], and nothing is removed; another user's
// factor id is not found.
//
// A user must have one when [SecondFactorOptions.Required] is set, or
// when [SecondFactorOptions.RequiredFor] returns true for them; an error
// from RequiredFor refuses the removal of a last factor too (it is
// returned, wrapped), so that a policy that cannot be asked never lets the
// last factor go. RequiredFor is asked only when the answer matters. With
// removals racing to the last factor (each sees the other's), every
// removal that finds none left once it is done asks the policy, and when
// the user must have one (or the policy fails) puts its factor back and is
// refused: the user keeps at least one.
//
// When the last usable factor goes, what hung on it goes too: the
// recovery codes (they answer a second factor that is no longer asked
// for; the next first factor comes with new ones) and the trust of every
// browser the user trusted ([SecondFactorOptions.TrustDevice]), so that
// none of them skips a factor enrolled later. When they cannot be deleted
// the removal reports it and they are deleted in the background; a
// trusted browser left over meanwhile still skips no factor enrolled after
// its trust was given (see TrustDevice).
//
// A requirement [Callbacks.SignIn] returns ([SignInDecision.RequireSecondFactor])
// is a decision about one sign-in, taken on its provider, account,
// profile and credentials; Remove has no sign-in to ask it about, so it
// removes the last factor of a user the callback requires one of. That
// requirement still holds at every sign-in the callback returns it for:
// the user enrols TOTP in the pending sign-in, or answers an e-mail code,
// or is refused with [CodeSecondFactor]. A requirement that belongs to the
// user rather than the sign-in goes in RequiredFor, which Remove keeps.
func (f Factors) Remove(ctx context.Context, userID, factorID string) error {
	a := f.a
	if err := a.factorsOn(); err != nil {
		return err
	}
	factors, err := a.listFactors(ctx, userID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(factors, func(fa core.Factor) bool { return fa.ID == factorID })
	if i < 0 {
		return fmt.Errorf("second factors: factor %q of user %q: %w", factorID, userID, core.ErrNotFound)
	}
	target := factors[i]
	usable := func(fa core.Factor) bool { return isUsableType(fa.Type) }
	// mustKeep asks the policy at most once per removal, on the context
	// it is first given.
	var asked struct {
		done bool
		keep bool
		err  error
	}
	mustKeep := func(ctx context.Context) (bool, error) {
		if !asked.done {
			asked.keep, asked.err = a.mustHaveFactor(ctx, userID)
			asked.done = true
		}
		return asked.keep, asked.err
	}
	if usable(target) && !slices.ContainsFunc(factors, func(fa core.Factor) bool { return fa.ID != factorID && usable(fa) }) {
		keep, err := mustKeep(ctx)
		if err != nil {
			return err
		}
		if keep {
			return errLastFactor
		}
	}
	deleted, err := a.deleteFactor(ctx, userID, factorID)
	if err != nil {
		return err
	}
	if deleted == nil {
		return fmt.Errorf("second factors: factor %q of user %q: %w", factorID, userID, core.ErrNotFound)
	}
	if !usable(*deleted) {
		return nil
	}
	// Once the factor is gone, what follows decides whether the user is
	// left without one: it runs to its end on a context of its own, so
	// that a caller who goes away (a request cancelled at the right
	// moment) cannot leave a user who must have a factor with none.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	// Removals of the user's other factors may have raced this one (each
	// saw the other's factor): look again now that this one is gone.
	after, err := a.listFactors(cctx, userID)
	if err == nil && slices.ContainsFunc(after, usable) {
		return nil
	}
	keep, kerr := mustKeep(cctx)
	if keep || kerr != nil {
		// None left, or none known to be, of a user who must have one (or
		// whose policy could not be asked): put it back. Of removals
		// racing to the last factor, each puts its own back, and the user
		// keeps their factors.
		restore := func(ctx context.Context) error {
			if _, err := a.createFactor(ctx, *deleted); err != nil && !errors.Is(err, core.ErrAlreadyExists) {
				return err
			}
			return nil
		}
		if rerr := restore(cctx); rerr != nil {
			a.log.ErrorContext(ctx, "authport: restoring a factor whose removal left a user who must have one with none failed; retrying in the background", "error", rerr)
			go retryLater(context.WithoutCancel(ctx), restore)
			return fmt.Errorf("second factors: the user's last factor was removed and is being restored (retrying in the background for %v); the store's error is logged", cleanupRetryWindow)
		}
		switch {
		case kerr != nil:
			return kerr
		case err != nil:
			return err
		}
		return errLastFactor
	}
	// No usable factor left: the recovery codes and the trusted browsers
	// go too (dropLeftovers reads again, so that a factor added meanwhile
	// keeps them).
	drop := func(ctx context.Context) error { return a.dropLeftovers(ctx, userID) }
	if err := drop(ctx); err != nil {
		go retryLater(context.WithoutCancel(ctx), drop)
		return fmt.Errorf("second factors: the last factor was removed, but its recovery codes and trusted browsers were not (retrying in the background for %v): %w", cleanupRetryWindow, err)
	}
	return nil
}

// errLastFactor refuses the removal of the last usable factor of a user
// who must have one.
var errLastFactor = fmt.Errorf("%w: a second factor is required for this user, and this is their last one; add another factor first, then remove this one", core.ErrInvalidInput)

// mustHaveFactor reports whether the user must have a second factor
// whatever the sign-in: [SecondFactorOptions.Required], or RequiredFor's
// answer for the stored user. RequiredFor's error (or panic) is returned
// wrapped, for the caller to fail closed on.
func (a *Auth) mustHaveFactor(ctx context.Context, userID string) (bool, error) {
	if a.sf.Required {
		return true, nil
	}
	if a.sf.RequiredFor == nil {
		return false, nil
	}
	user, err := call(a, "second factors", func(g core.UserGetter) (*core.User, error) {
		return g.GetUser(ctx, userID)
	})
	if err != nil {
		return false, err
	}
	if user == nil {
		return false, fmt.Errorf("second factors: user %q: %w", userID, core.ErrNotFound)
	}
	return a.requiredFor(ctx, *user)
}

// requiredFor asks [SecondFactorOptions.RequiredFor] about the user (false
// when it is nil). Its error, or a panic, comes back as an error naming
// the user, never as false.
func (a *Auth) requiredFor(ctx context.Context, user core.User) (required bool, err error) {
	if a.sf.RequiredFor == nil {
		return false, nil
	}
	defer func() {
		if p := recover(); p != nil {
			required, err = false, fmt.Errorf("%w: second factors: SecondFactorOptions.RequiredFor panicked for user %q: %v", core.ErrInvalidConfig, user.ID, p)
		}
	}()
	required, err = a.sf.RequiredFor(ctx, user)
	if err != nil {
		// core.ErrInvalidConfig first: a policy's failure is the
		// application's, never the caller's bad input, whatever its own
		// error wraps (the handler shows a bad input's message).
		return false, fmt.Errorf("%w: second factors: SecondFactorOptions.RequiredFor failed for user %q: %w", core.ErrInvalidConfig, user.ID, err)
	}
	return required, nil
}

// isUsableType reports whether a factor of type t is one a sign-in asks
// for (recovery codes and trusted devices are not).
func isUsableType(t core.FactorType) bool {
	return t == core.FactorTOTP || t == core.FactorPasskey || t == core.FactorEmail
}

// deleteFactor is deleteFactor through the checked layer.
func (a *Auth) deleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	return call(a, "second factors", func(d core.FactorDeleter) (*core.Factor, error) {
		return d.DeleteFactor(ctx, userID, id)
	})
}

// RevokeTrustedDevices ends the trust of every browser of the user and
// reports how many it ended.
func (f Factors) RevokeTrustedDevices(ctx context.Context, userID string) (int, error) {
	if err := f.a.factorsOn(); err != nil {
		return 0, err
	}
	return f.a.revokeDevices(ctx, userID)
}

// Pending reads a pending sign-in's token: what it can be answered with.
// An expired or forged token is refused with [CodeSecondFactor]; a used
// one is refused when it is answered (reading it writes nothing, and the
// contract has no read of a verification token that does not use it).
func (f Factors) Pending(ctx context.Context, pendingToken string) (*PendingSignIn, error) {
	pc, err := f.a.openPending(pendingToken)
	if err != nil {
		return nil, err
	}
	return &PendingSignIn{Token: pendingToken, Expires: time.Unix(pc.Expires, 0).UTC(), Factors: slices.Clone(pc.Factors), Enroll: pc.Enroll}, nil
}

// SendEmailCode sends a code to the pending user's verified address. It
// works for a pending sign-in offered e-mail codes
// ([PendingSignIn.Factors]); the code answers that pending sign-in only.
func (f Factors) SendEmailCode(ctx context.Context, pendingToken string) error {
	a := f.a
	pc, err := a.openPending(pendingToken)
	if err != nil {
		return err
	}
	if !slices.Contains(pc.Factors, core.FactorEmail) || slices.Contains(pc.Methods, AMREmail) {
		return refused("e-mail codes are not offered to this sign-in")
	}
	user, err := a.pendingUser(ctx, pc.UserID)
	if err != nil {
		return err
	}
	return a.sendFactorCode(ctx, *user, purposeSecondFactor, pc.ID)
}

// Verify answers a pending sign-in: on success the sign-in completes as
// the first factor would have (session, events, JWT claims) and the
// pending sign-in is used up. A wrong answer is refused with
// [CodeSecondFactor] and changes nothing but the attempt counts
// ([SecondFactorOptions.Attempts]); the pending sign-in can be answered
// again until the cap.
//
// The sign-in then made carries what the pending token kept: the user
// (read again), the provider, IsNewUser and the account; the account's
// provider tokens are left out when they would not fit a cookie, and the
// OAuth profile is never kept, so [Events.SignIn] and [Callbacks.JWT]
// receive a nil Profile after a second factor.
func (f Factors) Verify(ctx context.Context, pendingToken string, answer Answer) (*SignIn, error) {
	a := f.a
	pc, err := a.openPending(pendingToken)
	if err != nil {
		return nil, err
	}
	if err := a.countAttempt(ctx, pc.ID, pc.UserID); err != nil {
		return nil, err
	}
	user, err := a.pendingUser(ctx, pc.UserID)
	if err != nil {
		return nil, err
	}
	if answer.Enrollment != "" {
		// Only a pending sign-in made for a user without a factor enrols
		// (PendingSignIn.Enroll); any other would let the first factor
		// alone add a second and answer with it.
		if !pc.Enroll {
			return nil, refused("the pending sign-in does not enrol")
		}
		if err := a.stillEnrolls(ctx, *user); err != nil {
			return nil, err
		}
		enrolled, err := a.confirmTOTP(ctx, user.ID, pc.ID, answer.Enrollment, answer.Code)
		if err != nil {
			return nil, err
		}
		si, err := a.completePending(ctx, pc, user, []string{AMROneTimePassword}, answer.TrustDevice, true, enrolled.RecoveryCodes)
		if err != nil {
			// The sign-in failed: the user is shown neither the factor
			// nor its recovery codes, so they go (the enrolment can be
			// confirmed again, by a new sign-in if this one is used up).
			return nil, a.undoFactor(ctx, user.ID, enrolled.Factor.ID, err)
		}
		return si, nil
	}
	if !slices.Contains(pc.Factors, answer.Type) {
		return nil, refused("the answer's factor type is not offered to this sign-in")
	}
	if answer.Type == core.FactorEmail && slices.Contains(pc.Methods, AMREmail) {
		// The mailbox answered the first factor already.
		return nil, refused("an e-mail code does not answer a sign-in made by e-mail")
	}
	if err := a.checkAnswer(ctx, *user, answer, pc.ID); err != nil {
		return nil, err
	}
	return a.completePending(ctx, pc, user, []string{AMROneTimePassword}, answer.TrustDevice, pc.HadFactor, nil)
}

// checkAnswer checks a code answer for the user; binding is the pending
// sign-in's id, or reauthBinding.
func (a *Auth) checkAnswer(ctx context.Context, user core.User, answer Answer, binding string) error {
	switch answer.Type {
	case core.FactorTOTP:
		return a.checkTOTP(ctx, user.ID, answer.Code)
	case core.FactorRecoveryCodes:
		return a.useRecoveryCode(ctx, user.ID, answer.Code)
	case core.FactorEmail:
		purpose := purposeSecondFactor
		if binding == reauthBinding {
			purpose = purposeReauth
		}
		if !a.canEmail(user) {
			return refused("e-mail codes are off or the address is not verified")
		}
		_, err := a.useCode(ctx, "second factors", emailCodeIdentifier(user.ID), binding, answer.Code, a.emailCodeSpec(purpose))
		if errors.Is(err, errCodeRefused) {
			return refused("the e-mail code does not work")
		}
		if err != nil {
			return err
		}
		if factors, err := a.listFactors(ctx, user.ID); err != nil {
			a.log.ErrorContext(ctx, "authport: recording a factor's use failed", "error", err)
		} else {
			a.touchFactor(ctx, factors, core.FactorEmail, "")
		}
		return nil
	}
	return refused("unknown factor type")
}

// PasskeyCredentials are the credentials a pending user may answer with
// (the assertion's allowed credentials: the user's passkey factors), or
// those of a signed-in user re-authenticating (pendingToken "": every
// passkey of the user).
//
// A pending token is opened (forged and expired ones are refused), not
// checked for use: the contract has no read of a verification token that
// does not use it, and using it here would end the sign-in. A used token
// therefore still gets credentials, and passkey options, until it
// expires; that gives its holder nothing: the credential ids are those it
// was offered while the sign-in waited, nothing is written, and the
// assertion is refused by [Factors.VerifyPasskey], which uses the pending
// sign-in up before any session and records the factor's use only after.
func (f Factors) PasskeyCredentials(ctx context.Context, userID, pendingToken string) ([]core.Authenticator, error) {
	a := f.a
	if err := a.factorsOn(); err != nil {
		return nil, err
	}
	var factorIDs []string
	if pendingToken != "" {
		pc, err := a.openPending(pendingToken)
		if err != nil {
			return nil, err
		}
		if userID != "" && userID != pc.UserID {
			return nil, refused("the pending sign-in is another user's")
		}
		userID = pc.UserID
		factors, err := a.listFactors(ctx, userID)
		if err != nil {
			return nil, err
		}
		for _, fa := range factors {
			if fa.Type == core.FactorPasskey {
				factorIDs = append(factorIDs, string(fa.Secret))
			}
		}
		if len(factorIDs) == 0 {
			return []core.Authenticator{}, nil
		}
	}
	all, err := call(a, "second factors (passkeys)", func(l core.AuthenticatorsByUserLister) ([]core.Authenticator, error) {
		return l.ListAuthenticatorsByUserID(ctx, userID)
	})
	if err != nil {
		return nil, err
	}
	if pendingToken == "" {
		return all, nil
	}
	return slices.DeleteFunc(all, func(au core.Authenticator) bool { return !slices.Contains(factorIDs, au.CredentialID) }), nil
}

// VerifyPasskey answers a pending sign-in with a passkey assertion the
// caller verified (module passkey): credentialID and counter as in
// [Auth.SignInWithPasskey]; userVerified must be true, and the credential
// one of the pending user's passkey factors (another user's passkey, or
// one that is not a factor, is refused with [CodeSecondFactor] before its
// counter is touched).
func (f Factors) VerifyPasskey(ctx context.Context, pendingToken, credentialID string, counter int64, userVerified, trustDevice bool) (*SignIn, error) {
	a := f.a
	pc, err := a.openPending(pendingToken)
	if err != nil {
		return nil, err
	}
	if err := a.countAttempt(ctx, pc.ID, pc.UserID); err != nil {
		return nil, err
	}
	if !userVerified {
		return nil, refused("a passkey answers a second factor only with user verification")
	}
	if !slices.Contains(pc.Factors, core.FactorPasskey) {
		return nil, refused("passkeys are not offered to this sign-in")
	}
	factors, err := a.listFactors(ctx, pc.UserID)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(factors, func(fa core.Factor) bool {
		return fa.Type == core.FactorPasskey && subtle.ConstantTimeCompare(fa.Secret, []byte(credentialID)) == 1
	}) {
		return nil, refused("the passkey is not one of the user's second factors")
	}
	user, _, err := a.advanceCounter(ctx, credentialID, counter)
	if err != nil {
		return nil, err
	}
	if user.ID != pc.UserID {
		return nil, refused("the passkey is another user's")
	}
	si, err := a.completePending(ctx, pc, user, []string{AMRHardwareKey, AMRUser}, trustDevice, true, nil)
	if err != nil {
		return nil, err
	}
	a.touchFactor(ctx, factors, core.FactorPasskey, credentialID)
	return si, nil
}

// touchFactor records that the passkey or e-mail code factor (of type t
// and Secret secret) was used: its LastUsedAt, and its Step, which counts
// the uses, so that the user's attempt budget starts again (countAttempt).
// A failure is only logged.
func (a *Auth) touchFactor(ctx context.Context, factors []core.Factor, t core.FactorType, secret string) {
	for _, fa := range factors {
		if fa.Type == t && string(fa.Secret) == secret {
			next := fa
			next.LastUsedAt = a.now()
			if next.Step < math.MaxInt64 {
				next.Step++
			}
			if _, err := a.store.SwapFactor(ctx, fa, next); err != nil && !errors.Is(err, core.ErrFactorChanged) {
				a.log.ErrorContext(ctx, "authport: recording a factor's use failed", "error", err)
			}
			return
		}
	}
}

// Reauthenticate proves a factor again for the signed-in user (a password,
// or an [Answer], or both) and returns a fresh sign-in: with database
// sessions a new session replaces current (whose token is deleted; when
// it cannot be, the re-authentication fails and its new session is
// deleted, so that current stands), with JWT sessions new claims (through
// [Callbacks.JWT], trigger signIn);
// either way with auth_time now and the methods just proven ("mfa" when
// both a password and an answer were; an e-mail code proves "otp" when
// the user made e-mail codes a factor, else "email", as an e-mail
// sign-in does). A wrong password or answer is
// refused ([CodeCredentialsSignin], [CodeSecondFactor]) and writes
// nothing but the attempt count. No SignIn event runs.
func (f Factors) Reauthenticate(ctx context.Context, userID, current string, password string, answer Answer) (*SignIn, error) {
	a := f.a
	if err := a.factorsOn(); err != nil {
		return nil, err
	}
	if password == "" && answer.Type == "" {
		return nil, fmt.Errorf("%w: re-authentication needs a password or an answer", core.ErrInvalidInput)
	}
	if err := a.countAttempt(ctx, "", userID); err != nil {
		return nil, err
	}
	user, err := a.pendingUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	var first, second []string
	if password != "" {
		if a.pw == nil {
			return nil, fmt.Errorf("%w: re-authentication with a password needs the password provider", core.ErrInvalidConfig)
		}
		pw, err := checkShape(password)
		if err != nil {
			return nil, err
		}
		acc, err := a.passwordAccountOf(ctx, user.ID)
		if err != nil {
			return nil, err
		}
		_, ok, _, err := Passwords{a}.verify(ctx, a.pw, acc, pw)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errPasswordSignIn
		}
		first = []string{AMRPassword}
	}
	if answer.Type != "" {
		if err := a.checkAnswer(ctx, *user, answer, reauthBinding); err != nil {
			return nil, err
		}
		second = []string{AMROneTimePassword}
		if answer.Type == core.FactorEmail {
			// An e-mail code proves the mailbox; it is one of the user's
			// factors ("otp") only when they made it one.
			factors, err := a.listFactors(ctx, user.ID)
			if err != nil {
				return nil, err
			}
			if !slices.ContainsFunc(factors, func(fa core.Factor) bool { return fa.Type == core.FactorEmail }) {
				second = []string{AMREmail}
			}
		}
	}
	return a.reauthenticated(ctx, *user, current, combine(first, second))
}

// ReauthenticatePasskey is [Factors.Reauthenticate] with a passkey
// assertion the caller verified: userVerified must be true and the
// passkey the user's (any of their passkeys); its counter is advanced as
// a sign-in's is. The new session records hwk, user and mfa.
func (f Factors) ReauthenticatePasskey(ctx context.Context, userID, current, credentialID string, counter int64, userVerified bool) (*SignIn, error) {
	a := f.a
	if err := a.factorsOn(); err != nil {
		return nil, err
	}
	if err := a.countAttempt(ctx, "", userID); err != nil {
		return nil, err
	}
	if !userVerified {
		return nil, refused("re-authentication with a passkey needs user verification")
	}
	au, err := call(a, "second factors (passkeys)", func(g core.AuthenticatorGetter) (*core.Authenticator, error) {
		return g.GetAuthenticator(ctx, credentialID)
	})
	if err != nil {
		return nil, err
	}
	if au == nil || au.UserID != userID {
		return nil, refused("the passkey is not the user's")
	}
	user, _, err := a.advanceCounter(ctx, credentialID, counter)
	if err != nil {
		return nil, err
	}
	if user.ID != userID {
		return nil, refused("the passkey is not the user's")
	}
	return a.reauthenticated(ctx, *user, current, []string{AMRHardwareKey, AMRMultiFactor, AMRUser})
}

// reauthenticated makes the fresh session (or claims) of a
// re-authentication that proved methods, and ends current when it is the
// user's session.
func (a *Auth) reauthenticated(ctx context.Context, user core.User, current string, methods []string) (*SignIn, error) {
	au := authenticationAt(a.now(), methods)
	si := &SignIn{User: user, Authentication: au}
	if a.strategy == StrategyJWT {
		claims, err := a.signInClaims(ctx, si)
		if err != nil {
			return nil, err
		}
		si.Claims = claims
		return si, nil
	}
	s, err := a.createSession(ctx, user.ID, au)
	if err != nil {
		return nil, err
	}
	si.Session = *s
	if current != "" {
		su, err := call(a, "re-authentication", func(g core.SessionAndUserGetter) (*core.SessionAndUser, error) {
			return g.GetSessionAndUser(ctx, current)
		})
		if err == nil && su != nil && su.User.ID == user.ID {
			_, err = a.SignOut(ctx, current)
		}
		if err != nil {
			// A re-authentication reported done has ended the session it
			// replaces: this one fails instead, and its new session goes;
			// the old one stands, and the user can re-authenticate again.
			return nil, a.dropSession(ctx, s.SessionToken, fmt.Errorf("re-authentication: ending the session it replaces: %w", err))
		}
	}
	return si, nil
}

// SendReauthCode sends an e-mail code to the signed-in user for
// [Factors.Reauthenticate] (an [Answer] of type [core.FactorEmail]). It
// needs [SecondFactorOptions.EmailCode] and a verified address.
func (f Factors) SendReauthCode(ctx context.Context, userID string) error {
	a := f.a
	if err := a.factorsOn(); err != nil {
		return err
	}
	user, err := a.pendingUser(ctx, userID)
	if err != nil {
		return err
	}
	if !a.canEmail(*user) {
		return fmt.Errorf("%w: e-mail codes are off or the address is not verified", core.ErrInvalidInput)
	}
	return a.sendFactorCode(ctx, *user, purposeReauth, reauthBinding)
}

// SignInWithPasskeyAssertion is [Auth.SignInWithPasskey] told whether the
// authenticator verified its user (the assertion's UV flag): a passkey
// sign-in with user verification is two factors in one (amr "hwk" and
// "user", level [LevelMultiFactor]) and is not asked for a second factor;
// without it the sign-in is one factor like any other.
func (a *Auth) SignInWithPasskeyAssertion(ctx context.Context, providerID, credentialID string, counter int64, userVerified bool, current *core.User) (*SignIn, error) {
	return a.signInWithPasskey(ctx, providerID, credentialID, counter, userVerified, current)
}

// factorsOn refuses the factor operations when second factors are off.
func (a *Auth) factorsOn() error {
	if !a.sf.Enabled {
		return errSecondFactorsOff
	}
	return nil
}

// listFactors is listFactorsByUserId through the checked layer.
func (a *Auth) listFactors(ctx context.Context, userID string) ([]core.Factor, error) {
	return call(a, "second factors", func(l core.FactorsByUserLister) ([]core.Factor, error) {
		return l.ListFactorsByUserID(ctx, userID)
	})
}

// factorName checks a factor's label: printable, at most
// [core.MaxFactorName] bytes; "" gives def.
func factorName(name, def string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return def, nil
	}
	if len(name) > core.MaxFactorName || printable(name, core.MaxFactorName) != name {
		return "", fmt.Errorf("%w: a factor's name is at most %d bytes of printable UTF-8", core.ErrInvalidInput, core.MaxFactorName)
	}
	return name, nil
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
