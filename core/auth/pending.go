package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/ratelimit"
)

// The pending stage: between "who is signing in" (the first factor, with
// everything it wrote: the user created, the account linked, the address
// verified) and the session. finish asks the user for a second factor when
// they have one, when every user must ([SecondFactorOptions.Required]),
// when the user must (RequiredFor), or when [Callbacks.SignIn] says so; the sign-in then ends in a
// [PendingSignIn] instead of a session.
//
// The pending sign-in is a sealed token (see seal.go) that carries what
// finishing needs: the user, the provider, the first factor's methods,
// IsNewUser, the account (its provider tokens left out when the token
// would not fit a cookie) and, for a password sign-in, a keyed hash of the
// password hash it verified. It is single-use across instances through a
// verification token stored when it is made (identifier
// pendingIdentifier, token a keyed hash of its random id) and used
// (useVerificationToken, single-use on every backend) when it is answered:
// of any number of right answers raced on any number of instances, one
// makes a session.

// errSecondFactor is the refusal of a second factor or of the pending
// sign-in it answers: wrong, replayed, expired, used, forged, or over the
// attempt cap. It says no more on purpose; its code is [CodeSecondFactor].
var errSecondFactor = coded(CodeSecondFactor, "second factor refused: wrong, replayed or expired code, or a pending sign-in that is expired, used or not this browser's")

// refused returns errSecondFactor with a detail for logs (never a code or
// token).
func refused(detail string) error {
	return fmt.Errorf("%w (%s)", errSecondFactor, detail)
}

// pendingIdentifier is the verification-token identifier of pending
// sign-ins.
const pendingIdentifier = "authport:pending-sign-in"

// pendingAAD binds the sealed pending token to its format.
var pendingAAD = []byte("authport pending sign-in v1")

// maxPendingToken is the longest pending token finish makes with the
// account's provider tokens; a longer one is made without them, so that
// it fits a cookie.
const maxPendingToken = 3000

// pendingClaims is what a pending sign-in's token carries.
type pendingClaims struct {
	ID            string            `json:"i"`
	UserID        string            `json:"u"`
	ProviderID    string            `json:"p"`
	Methods       []string          `json:"m,omitempty"`
	IsNewUser     bool              `json:"n,omitempty"`
	UsernameTaken bool              `json:"t,omitempty"`
	Account       *core.Account     `json:"a,omitempty"`
	Hash          string            `json:"h,omitempty"`
	Factors       []core.FactorType `json:"f,omitempty"`
	Enroll        bool              `json:"e,omitempty"`
	// HadFactor: the user had a usable factor when the pending sign-in
	// was made, so that its answer is one of them (completePending's
	// withFactor), not an e-mail code of a user who has none.
	HadFactor bool  `json:"hf,omitempty"`
	Expires   int64 `json:"x"`
}

// pendingKey is the verification token that makes the pending sign-in
// with the id single-use, hashed with secret.
func pendingKey(secret, id string) core.VerificationTokenKey {
	return core.VerificationTokenKey{Identifier: pendingIdentifier, Token: keyedHash(secret, "authport pending sign-in", id)}
}

// passwordFingerprint is what a pending sign-in keeps of the password hash
// its first factor verified.
func passwordFingerprint(secret, userID, hash string) string {
	return keyedHash(secret, "authport pending password", userID, hash)
}

// secondFactorStage decides whether the sign-in si waits for a second
// factor, and when it does makes the pending sign-in.
func (a *Auth) secondFactorStage(ctx context.Context, si *SignIn) (*PendingSignIn, error) {
	if slices.Contains(si.amr, AMRMultiFactor) {
		// A passkey with user verification: two factors in one.
		return nil, nil
	}
	factors, err := a.listFactors(ctx, si.User.ID)
	if err != nil {
		return nil, err
	}
	offer, usable := a.offer(si.User, factors)
	if !usable && !a.sf.Required && !si.requireSecond {
		// A user without a factor, whom neither Required nor the
		// callback asks one of: RequiredFor decides. Its failure refuses
		// the sign-in rather than letting it through on one factor.
		required, err := a.requiredFor(ctx, si.User)
		if err != nil {
			return nil, Fail(CodeConfiguration, fmt.Errorf("the sign-in cannot tell whether the user needs a second factor: %w", err))
		}
		if !required {
			return nil, nil
		}
	}
	if a.trustedDevice(ctx, si.User.ID, factors) {
		return nil, nil
	}
	// After an e-mail first factor the mailbox is proven already: an
	// e-mail code would prove it again, not a second factor.
	mailbox := slices.Contains(si.amr, AMREmail)
	if mailbox {
		offer = slices.DeleteFunc(offer, func(t core.FactorType) bool { return t == core.FactorEmail })
		if usable && !slices.ContainsFunc(offer, isUsableType) {
			return nil, Fail(CodeSecondFactor, fmt.Errorf("%w: user %q's only second factor is an e-mail code, which cannot follow an e-mail sign-in; the user signs in another way", core.ErrInvalidInput, si.User.ID))
		}
	}
	enroll := false
	if !usable {
		offer = offer[:0]
		if a.canEmail(si.User) && !mailbox {
			offer = append(offer, core.FactorEmail)
		}
		enroll = a.sf.TOTP != nil
		if !enroll && len(offer) == 0 {
			return nil, Fail(CodeSecondFactor, fmt.Errorf("%w: a second factor is required, and user %q has none and can enrol none (configure SecondFactorOptions.TOTP, or EmailCode for users with a verified address who did not sign in by e-mail)", core.ErrInvalidInput, si.User.ID))
		}
	}
	if si.confirm != nil {
		if err := si.confirm(ctx); err != nil {
			return nil, err
		}
	}
	id, err := randomHex(16)
	if err != nil {
		return nil, err
	}
	expires := a.now().Add(a.sf.PendingMaxAge).Truncate(time.Second)
	pc := pendingClaims{ID: id, UserID: si.User.ID, ProviderID: si.ProviderID, Methods: si.amr, IsNewUser: si.IsNewUser,
		UsernameTaken: si.UsernameTaken, Account: withoutHash(si.Account), Factors: offer, Enroll: enroll, HadFactor: usable, Expires: expires.Unix()}
	if si.verifiedHash != "" {
		pc.Hash = passwordFingerprint(a.secrets[0], si.User.ID, si.verifiedHash)
	}
	token, err := a.sealPending(pc)
	if err != nil {
		return nil, err
	}
	key := pendingKey(a.secrets[0], id)
	if _, err := call(a, "second factors", func(c core.VerificationTokenCreator) (*core.VerificationToken, error) {
		return c.CreateVerificationToken(ctx, core.VerificationToken{Identifier: key.Identifier, Token: key.Token, Expires: expires})
	}); err != nil {
		return nil, err
	}
	return &PendingSignIn{Token: token, Expires: expires, Factors: offer, Enroll: enroll}, nil
}

// sealPending seals the claims, without the account's provider tokens
// when the token would not fit a cookie with them.
func (a *Auth) sealPending(pc pendingClaims) (string, error) {
	for {
		plain, err := json.Marshal(pc)
		if err != nil {
			return "", fmt.Errorf("second factors: encoding the pending sign-in: %w", err)
		}
		token, err := a.seal.pending.sealString(plain, pendingAAD)
		if err != nil || len(token) <= maxPendingToken || pc.Account == nil || pc.Account.AccessToken == nil && pc.Account.IDToken == nil && pc.Account.RefreshToken == nil {
			return token, err
		}
		acc := core.Account{UserID: pc.Account.UserID, Provider: pc.Account.Provider, Type: pc.Account.Type, ProviderAccountID: pc.Account.ProviderAccountID}
		pc.Account = &acc
	}
}

// openPending opens a pending sign-in's token and checks its expiry.
func (a *Auth) openPending(token string) (*pendingClaims, error) {
	if a.seal == nil {
		return nil, errSecondFactorsOff
	}
	plain, err := a.seal.pending.openString(token, pendingAAD)
	if err != nil {
		return nil, refused("the pending sign-in's token does not open")
	}
	var pc pendingClaims
	if err := json.Unmarshal(plain, &pc); err != nil || pc.ID == "" || pc.UserID == "" {
		return nil, refused("the pending sign-in's token is malformed")
	}
	if !a.now().Before(time.Unix(pc.Expires, 0)) {
		return nil, refused("the pending sign-in expired")
	}
	return &pc, nil
}

// usePending uses up the pending sign-in: of every request answering it,
// one gets true.
func (a *Auth) usePending(ctx context.Context, pc *pendingClaims) error {
	for _, secret := range a.secrets {
		v, err := a.useKey(ctx, "second factors", pendingKey(secret, pc.ID))
		if err != nil {
			return err
		}
		if v != nil {
			if v.Expired(a.now()) {
				return refused("the pending sign-in expired")
			}
			return nil
		}
	}
	return refused("the pending sign-in was used already")
}

// offer returns the factor types the user can answer with, in the order to
// offer them (TOTP, passkey, e-mail, then recovery codes), and whether the
// user has a usable factor (recovery codes alone are not one).
func (a *Auth) offer(user core.User, factors []core.Factor) ([]core.FactorType, bool) {
	var out []core.FactorType
	recovery := false
	for _, t := range []core.FactorType{core.FactorTOTP, core.FactorPasskey, core.FactorEmail} {
		if slices.ContainsFunc(factors, func(f core.Factor) bool { return f.Type == t }) && a.usableType(user, t) {
			out = append(out, t)
		}
	}
	for _, f := range factors {
		if f.Type == core.FactorRecoveryCodes && len(f.Secret) >= recoveryHashSize {
			recovery = true
		}
	}
	usable := len(out) > 0
	if usable && recovery {
		out = append(out, core.FactorRecoveryCodes)
	}
	return out, usable
}

// usableType reports whether a factor of type t can be answered now: TOTP
// needs [SecondFactorOptions.TOTP], e-mail codes EmailCode and a verified
// address.
func (a *Auth) usableType(user core.User, t core.FactorType) bool {
	switch t {
	case core.FactorTOTP:
		return a.sf.TOTP != nil
	case core.FactorPasskey:
		return true
	case core.FactorEmail:
		return a.canEmail(user)
	}
	return false
}

// canEmail reports whether the user can be sent e-mail codes.
func (a *Auth) canEmail(user core.User) bool {
	return a.sf.EmailCode && user.Email != "" && user.EmailVerified != nil
}

// countAttempt counts one answer of the pending sign-in id (none for
// "": a re-authentication or an enrolment) and of the user against the
// attempt caps ([SecondFactorOptions.Attempts]), before the answer is
// checked; it refuses the answer when either cap is reached.
//
// The pending sign-in's cap counts every answer of its life. The user's
// cap counts the answers given since the user's factors last changed: its
// key is made of the user's id and of what a right answer changes of their
// factors (factorState), so that a right answer starts a new budget and a
// user who signs in often is never refused, while wrong answers, which
// change nothing, keep spending the same one (and, counted before the
// check, are refused unchecked once it is spent).
func (a *Auth) countAttempt(ctx context.Context, pendingID, userID string) error {
	n := a.sf.Attempts
	if pendingID != "" {
		// At most n answers in the pending sign-in's life.
		res, err := a.limiter.Allow(ctx, "authport:2fa:pending:"+pendingID, ratelimit.Limit{Events: n, Period: time.Duration(n) * a.sf.PendingMaxAge})
		if err != nil {
			return fmt.Errorf("second factors: counting the attempt: %w", err)
		}
		if !res.Allowed {
			return refused("the pending sign-in's attempt cap is reached")
		}
	}
	factors, err := a.listFactors(ctx, userID)
	if err != nil {
		return err
	}
	res, err := a.limiter.Allow(ctx, "authport:2fa:user:"+factorState(userID, factors), ratelimit.Limit{Events: n, Period: a.sf.PendingMaxAge})
	if err != nil {
		return fmt.Errorf("second factors: counting the attempt: %w", err)
	}
	if !res.Allowed {
		return refused("the user's attempt cap is reached")
	}
	return nil
}

// factorState digests the user's id and what a right answer changes of
// the user's factors: each factor's id and Step (a TOTP factor's last
// accepted step; the uses of a recovery-code set, a passkey or e-mail
// codes). Trusted devices are left out: they come and go with sign-ins
// and sessions, not with answers.
func factorState(userID string, factors []core.Factor) string {
	h := sha256.New()
	h.Write([]byte(userID))
	for _, f := range factors {
		if f.Type == core.FactorTrustedDevice {
			continue
		}
		var step [8]byte
		binary.BigEndian.PutUint64(step[:], uint64(f.Step))
		h.Write([]byte{0})
		h.Write([]byte(f.ID))
		h.Write([]byte{0})
		h.Write(step[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// completePending finishes the pending sign-in pc whose second factor
// proved methods: it uses the pending sign-in up, checks that a password
// first factor's hash is unchanged, and makes the session. withFactor
// reports that the answer was one of the user's factors (or the factor
// just enrolled), not an e-mail code of a user who has none.
func (a *Auth) completePending(ctx context.Context, pc *pendingClaims, user *core.User, methods []string, trust, withFactor bool, recoveryCodes []string) (*SignIn, error) {
	if err := a.usePending(ctx, pc); err != nil {
		return nil, err
	}
	if pc.Hash != "" {
		acc, err := a.passwordAccountOf(ctx, user.ID)
		if err != nil {
			return nil, err
		}
		if acc == nil || acc.PasswordHash == nil || !a.matchesAnySecret(pc.Hash, func(s string) string { return passwordFingerprint(s, user.ID, *acc.PasswordHash) }) {
			return nil, Fail(CodeCredentialsSignin, fmt.Errorf("%w: the password changed while the sign-in waited for its second factor", errPasswordSignIn))
		}
	}
	si := &SignIn{ProviderID: pc.ProviderID, User: *user, Account: pc.Account, IsNewUser: pc.IsNewUser,
		UsernameTaken: pc.UsernameTaken, RecoveryCodes: recoveryCodes, amr: combine(pc.Methods, methods)}
	out, err := a.completeSignIn(ctx, si, authenticationAt(a.now(), si.amr))
	if err != nil {
		return nil, err
	}
	if trust && a.sf.TrustDevice > 0 {
		value, err := a.trustDevice(ctx, user.ID)
		if err != nil {
			// The sign-in stands; the browser is asked again next time.
			a.log.ErrorContext(ctx, "authport: remembering the trusted device failed", "error", err)
		}
		if value != "" && withFactor && !a.stillHasFactor(ctx, user.ID) {
			// The factor answered was the user's last, and was removed
			// while this sign-in finished: Remove ended the trust of the
			// user's browsers before this one was stored, so this one
			// goes too. (Remove deletes the factor and then the devices;
			// this stores the device and then reads the factors: one of
			// the two sees the other.) Without its cookie the record
			// trusts nothing; it is deleted all the same.
			id, _, _ := strings.Cut(value, ".")
			if _, err := a.deleteFactor(ctx, user.ID, id); err != nil {
				a.log.ErrorContext(ctx, "authport: deleting the trust of a browser whose factor was removed failed", "error", err)
			}
			value = ""
		}
		out.TrustedDevice = value
	}
	return out, nil
}

// stillHasFactor reports whether the user has a usable factor; false when
// their factors cannot be read.
func (a *Auth) stillHasFactor(ctx context.Context, userID string) bool {
	factors, err := a.listFactors(ctx, userID)
	return err == nil && slices.ContainsFunc(factors, func(fa core.Factor) bool { return isUsableType(fa.Type) })
}

// matchesAnySecret reports whether want equals make(secret) for one of the
// configured secrets, comparing in constant time.
func (a *Auth) matchesAnySecret(want string, make func(secret string) string) bool {
	ok := 0
	for _, s := range a.secrets {
		ok |= subtle.ConstantTimeCompare([]byte(want), []byte(make(s)))
	}
	return ok == 1
}

// pendingUser reads the user of a pending sign-in; a user deleted since
// is a refusal.
func (a *Auth) pendingUser(ctx context.Context, userID string) (*core.User, error) {
	user, err := call(a, "second factors", func(g core.UserGetter) (*core.User, error) {
		return g.GetUser(ctx, userID)
	})
	if err != nil {
		return nil, err
	}
	if user == nil {
		return nil, refused("the user is gone")
	}
	return user, nil
}

// errSecondFactorsOff refuses the second-factor operations when
// [SecondFactorOptions.Enabled] is false.
var errSecondFactorsOff = fmt.Errorf("%w: second factors are off (set Config.SecondFactors.Enabled)", core.ErrInvalidConfig)

// secondFactorNeeds are the adapter methods second factors use.
var secondFactorNeeds = append(core.FactorMethods(),
	core.MethodCreateVerificationToken, core.MethodUseVerificationToken, core.MethodGetUser)

// setUpSecondFactors checks [Config.SecondFactors] and applies its
// defaults.
func (a *Auth) setUpSecondFactors(o SecondFactorOptions) error {
	if !o.Enabled {
		if o.Required || o.RequiredFor != nil || o.TOTP != nil || o.EmailCode || o.TrustDevice != 0 {
			return fmt.Errorf("%w: SecondFactors sets options but not Enabled", core.ErrInvalidConfig)
		}
		return nil
	}
	switch {
	case o.PendingMaxAge < 0, o.Attempts < 0, o.TrustDevice < 0:
		return fmt.Errorf("%w: SecondFactors.PendingMaxAge, Attempts and TrustDevice must not be negative", core.ErrInvalidConfig)
	case (o.Required || o.RequiredFor != nil) && o.TOTP == nil && !o.EmailCode:
		return fmt.Errorf("%w: SecondFactors.Required and RequiredFor need a factor every user can enrol: set TOTP (module github.com/authport/authport/totp) or EmailCode", core.ErrInvalidConfig)
	case len(o.Issuer) > 128:
		return fmt.Errorf("%w: SecondFactors.Issuer is longer than 128 bytes", core.ErrInvalidConfig)
	}
	if o.EmailCode {
		if _, _, err := a.factorSender(); err != nil {
			return err
		}
	}
	if o.PendingMaxAge == 0 {
		o.PendingMaxAge = DefaultPendingMaxAge
	}
	if o.Attempts == 0 {
		o.Attempts = DefaultFactorAttempts
	}
	if o.Issuer == "" {
		o.Issuer = a.settings.Hostname
	}
	if o.Issuer == "" {
		o.Issuer = "authport"
	}
	s, err := newSealers(a.secrets)
	if err != nil {
		return err
	}
	a.sf, a.seal = o, s
	return nil
}

// factorSender returns the sender of e-mail codes: the e-mail provider's,
// else the password provider's.
func (a *Auth) factorSender() (func(context.Context, provider.VerificationRequest) error, provider.VerificationRequest, error) {
	for _, p := range a.list {
		if e, ok := p.(*provider.EmailConfig); ok {
			return e.SendVerificationRequest, provider.VerificationRequest{From: e.From, ProviderID: e.ID}, nil
		}
	}
	for _, p := range a.list {
		if pc, ok := p.(*provider.PasswordConfig); ok {
			return pc.SendVerificationRequest, provider.VerificationRequest{From: pc.From, ProviderID: pc.ID}, nil
		}
	}
	return nil, provider.VerificationRequest{}, fmt.Errorf("%w: SecondFactors.EmailCode needs an e-mail or password provider, whose sender delivers the codes", core.ErrInvalidConfig)
}
