package auth

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/password"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/ratelimit"
)

// This file is password sign-in ([Passwords]): sign-up, sign-in by
// address or username, e-mail verification, forgotten and changed
// passwords, through the one sign-in pipeline (SignIn callback, user and
// account, database or JWT session, events). It is enumeration-safe by
// construction: see [Passwords.SignUp], [Passwords.SignIn] and
// [Passwords.RequestReset].

// Token identifiers of password e-mails: scoped by purpose, so that a
// verification token cannot reset a password, and never an address.
const (
	verifyIdentifierPrefix = "authport:verify-email:"
	// verifyUsernamePrefix starts the identifier of the verification
	// tokens of a sign-up that chose a username as well: the username, a
	// colon (which no username holds), the address.
	verifyUsernamePrefix  = "authport:verify-email+username:"
	resetIdentifierPrefix = "authport:reset-password:"
)

// The refusals of password sign-in. Each carries a [Code].
var (
	// errPasswordSignIn is every refused password sign-in: an unknown
	// address or username, a user without a password, a wrong password,
	// and an address not yet verified; they are told apart nowhere, not
	// even in time (an unknown user is checked against a dummy hash).
	errPasswordSignIn = coded(CodeCredentialsSignin, "the address or username and password do not match an account that may sign in")
	// ErrUsernameTaken is a sign-up with a username another user has.
	// Usernames are not enumeration-safe: they are chosen to be found. A
	// sign-up with an address to verify answers it only from the
	// usernames users have, never from whether the address is taken (see
	// [Passwords.SignUp]).
	ErrUsernameTaken = &Error{Code: CodeBadRequest, Err: fmt.Errorf("the username is taken: %w", core.ErrAlreadyExists)}
	// ErrEmailTaken is a sign-up with a taken address when
	// [provider.PasswordConfig.AllowUnverifiedSignIn] is set (without it,
	// a taken address answers like a new one).
	ErrEmailTaken = &Error{Code: CodeBadRequest, Err: fmt.Errorf("the e-mail address has an account: %w", core.ErrAlreadyExists)}
	// ErrHasPassword is [Passwords.Set] for a user who has a password:
	// use [Passwords.Change].
	ErrHasPassword = &Error{Code: CodeBadRequest, Err: fmt.Errorf("the user has a password already; change it instead: %w", core.ErrAlreadyExists)}
	// errNoPasswordProvider: no password provider is configured.
	errNoPasswordProvider = fmt.Errorf("%w: no password provider is configured (add provider.Password to Config.Providers)", core.ErrInvalidConfig)
)

// badInput returns a refusal of malformed input: [CodeBadRequest],
// matching [core.ErrInvalidInput].
func badInput(format string, args ...any) error {
	return &Error{Code: CodeBadRequest, Err: fmt.Errorf("%w: "+format, append([]any{core.ErrInvalidInput}, args...)...)}
}

// Passwords is password sign-in; get it from [Auth.Passwords]. It needs a
// password provider ([provider.Password]) among Config.Providers, and an
// adapter that keeps password hashes (swapPasswordHash), usernames when
// they are on (getUserByUsername), and with database sessions
// deleteSessionsByUserId: [New] says which is missing.
type Passwords struct{ a *Auth }

// Passwords returns password sign-in.
func (a *Auth) Passwords() Passwords { return Passwords{a} }

// pwNeeded names password sign-in in missing-method errors.
const pwNeeded = "password sign-in"

// provider returns the configured password provider.
func (p Passwords) provider() (*provider.PasswordConfig, error) {
	if p.a.pw == nil {
		return nil, errNoPasswordProvider
	}
	return p.a.pw, nil
}

// Identity is what names a password user at sign-up: an e-mail address,
// a username (when usernames are on), or both.
type Identity struct {
	Email, Username string
}

// normalize returns the identity in its stored forms, or a refusal.
func (p Passwords) normalize(pc *provider.PasswordConfig, id Identity) (Identity, error) {
	var out Identity
	var err error
	if strings.TrimSpace(id.Email) != "" {
		if out.Email, err = NormalizeEmail(id.Email); err != nil {
			return out, badInput("e-mail address: %w", err)
		}
	}
	if strings.TrimSpace(id.Username) != "" {
		if !pc.Usernames {
			return out, badInput("usernames are off (provider.PasswordConfig.Usernames)")
		}
		if out.Username, err = core.NormalizeUsername(id.Username); err != nil {
			return out, badInput("username: %w", err)
		}
	}
	if out.Email == "" && out.Username == "" {
		if pc.Usernames {
			return out, badInput("an e-mail address or a username is required")
		}
		return out, badInput("an e-mail address is required")
	}
	return out, nil
}

// checkShape returns the password as it is hashed ([password.Normalize])
// and refuses one no policy could accept before anything is looked up:
// empty, not UTF-8, with a NUL or other control character, or over
// [password.MaxBytes] bytes.
func checkShape(pw string) (string, error) {
	if pw == "" {
		return "", badInput("a password is required: %w", password.ErrTooShort)
	}
	n, err := password.Normalize(pw)
	if err != nil {
		return "", badInput("the password: %w", err)
	}
	return n, nil
}

// validate checks a new password against the policy and returns it as it
// is hashed.
func (p Passwords) validate(ctx context.Context, pc *provider.PasswordConfig, pw string) (string, error) {
	if _, err := checkShape(pw); err != nil {
		return "", err
	}
	if err := pc.Policy.Validate(ctx, pw); err != nil {
		return "", &Error{Code: CodeBadRequest, Err: fmt.Errorf("%w: the password does not meet the policy: %w", core.ErrInvalidInput, err)}
	}
	return password.Normalize(pw)
}

// SignUpRequest is a password sign-up.
type SignUpRequest struct {
	Identity
	// Password is the new password, as typed.
	Password string
	// Name is the user's display name, or nil.
	Name *string
	// Binding is the browser binding of the code in the verification
	// e-mail (with Codes on); "" sends a link only.
	Binding string
}

// SignUpResult is what a sign-up answers. For an address, with
// verification required (the default), it is the same whether the address
// was new or taken: VerificationSent and no sign-in.
type SignUpResult struct {
	// VerificationSent reports that a verification e-mail was (or, for a
	// taken address, would have been) sent; the user signs in after
	// verifying.
	VerificationSent bool
	// SignIn is the sign-in of a user who may sign in at once (no address
	// to verify, or [provider.PasswordConfig.AllowUnverifiedSignIn]); nil
	// otherwise.
	SignIn *SignIn
}

// SignUp creates a user with a password account. With an address and
// verification required (the default) it answers exactly alike for a new
// and a taken address: for a new one it creates the user and mails the
// verification link (and code); for a taken one it changes nothing and
// mails the owner that someone tried to sign up with it. No session is
// made either way until the address is verified ([Passwords.VerifyEmail]).
// A username-only sign-up (no address to verify) signs in at once; a taken
// username is refused with [ErrUsernameTaken] (usernames are not
// enumeration-safe).
//
// A username chosen beside an address to verify is checked (taken →
// [ErrUsernameTaken], before anything else, on both paths) but not stored
// at sign-up, for a new address no more than for a taken one: it travels
// in the verification e-mail, bound into its tokens (see
// [Proof.Username]), and is given to the user when the address is
// verified, unless another user has taken it by then ([SignIn.UsernameTaken]).
// So nothing a later request can observe (a sign-up with that username
// alone, a sign-in with it) tells whether the address was taken. Bad input (an invalid address or username, a password
// the policy refuses) is refused with [CodeBadRequest] and changes nothing.
//
// A sign-up that fails after creating the user (the account, the
// verification token or the e-mail failed: the store or the mailer was
// down) removes the user again, as an OAuth sign-up does, retrying in the
// background while the store is failing, so that the same sign-up can be
// made again once it answers.
func (p Passwords) SignUp(ctx context.Context, req SignUpRequest) (*SignUpResult, error) {
	a := p.a
	pc, err := p.provider()
	if err != nil {
		return nil, err
	}
	id, err := p.normalize(pc, req.Identity)
	if err != nil {
		return nil, err
	}
	pw, err := p.validate(ctx, pc, req.Password)
	if err != nil {
		return nil, err
	}
	// Hashed first, whether the address is new or taken, so that the two
	// answers cost alike.
	hash, err := pc.Hasher.Hash(ctx, pw)
	if err != nil {
		return nil, fmt.Errorf("%s: hashing the password: %w", pwNeeded, err)
	}
	if id.Username != "" {
		holder, err := call(a, pwNeeded, func(g core.UserByUsernameGetter) (*core.User, error) {
			return g.GetUserByUsername(ctx, id.Username)
		})
		if err != nil {
			return nil, err
		}
		if holder != nil {
			return nil, ErrUsernameTaken
		}
	}
	verify := id.Email != "" && !pc.AllowUnverifiedSignIn
	taken := func() (*SignUpResult, error) {
		if !verify {
			return nil, ErrEmailTaken
		}
		return &SignUpResult{VerificationSent: true}, p.notifyOwner(ctx, pc, id.Email)
	}
	if id.Email != "" {
		holder, err := call(a, pwNeeded, func(g core.UserByEmailGetter) (*core.User, error) {
			return g.GetUserByEmail(ctx, id.Email)
		})
		if err != nil {
			return nil, err
		}
		if holder != nil {
			return taken()
		}
	}
	newUser := core.User{Email: id.Email, Username: id.Username, Name: req.Name}
	if verify {
		// Given at verification (carried by the e-mail): a username
		// stored now would tell a later sign-up with it that the address
		// was new.
		newUser.Username = ""
	}
	var second bool
	if !verify {
		// Signs in at once: the SignIn callback decides before anything
		// is written.
		if second, err = a.authorize(ctx, SignInParams{ProviderID: pc.ID, Type: provider.TypePassword, User: newUser, IsNewUser: true,
			Account: &core.Account{Provider: core.PasswordProvider, Type: core.AccountTypeCredentials}}); err != nil {
			return nil, err
		}
	}
	if newUser.ID, err = a.newUserID(); err != nil {
		return nil, fmt.Errorf("%s: user id: %w", pwNeeded, err)
	}
	user, err := a.createUser(ctx, pwNeeded, newUser)
	if errors.Is(err, core.ErrAlreadyExists) {
		// The id is new and ours: a user with it is this sign-up's (a
		// retried create whose first reply was lost), not a taken address.
		if mine, gerr := a.store.GetUser(ctx, newUser.ID); gerr == nil && mine != nil {
			user, err = mine, nil
		}
	}
	switch {
	case errors.Is(err, core.ErrAlreadyExists) && !isAdapterFailure(err):
		// A concurrent sign-up took the address or the username.
		if newUser.Username != "" {
			if holder, _ := a.store.GetUserByUsername(ctx, id.Username); holder != nil {
				return nil, ErrUsernameTaken
			}
		}
		return taken()
	case isAdapterFailure(err):
		return nil, a.removeUnlinkedUser(ctx, newUser.ID, err)
	case err != nil:
		return nil, err
	}
	acc, err := a.linkAccount(ctx, pwNeeded, *user, passwordAccount(user.ID, hash), nil)
	if err != nil {
		return nil, a.removeUnlinkedUser(ctx, user.ID, err)
	}
	if verify {
		p.verificationDue(ctx, pc, id.Email) // the sign-up's mail starts the interval
		if err := p.sendVerification(ctx, pc, id.Email, id.Username, req.Binding); err != nil {
			// Without its verification e-mail the user could never
			// verify: a new sign-up would find the address taken (and
			// only tell the owner so). The sign-up is undone instead,
			// so that it can be made again.
			return nil, a.removeUnlinkedUser(ctx, user.ID, err)
		}
		return &SignUpResult{VerificationSent: true}, nil
	}
	si, err := a.finish(ctx, &SignIn{ProviderID: pc.ID, User: *user, Account: acc, IsNewUser: true, requireSecond: second})
	if err != nil {
		return nil, err
	}
	return &SignUpResult{SignIn: si}, nil
}

// isAdapterFailure reports whether err is an adapter call's failure
// (*AdapterError) rather than a refusal of the layer above it.
func isAdapterFailure(err error) bool {
	var ae *AdapterError
	return errors.As(err, &ae) && !errors.Is(err, core.ErrAlreadyExists)
}

// passwordAccount is the user's password account holding hash.
func passwordAccount(userID, hash string) core.Account {
	return core.Account{UserID: userID, Provider: core.PasswordProvider, Type: core.AccountTypeCredentials,
		ProviderAccountID: userID, PasswordHash: &hash}
}

// withoutHash returns a copy of acc without its password hash: what
// sign-ins, events and callbacks get.
func withoutHash(acc *core.Account) *core.Account {
	if acc == nil {
		return nil
	}
	c := *acc
	c.PasswordHash = nil
	return &c
}

// passwordOf returns the password account of user, or nil when user is
// nil or has none.
func (a *Auth) passwordOf(ctx context.Context, user *core.User) (*core.Account, error) {
	if user == nil {
		return nil, nil
	}
	return a.passwordAccountOf(ctx, user.ID)
}

// verify checks pw against acc's hash, or against the dummy hash when acc
// is nil or has none, so that every refusal costs what a wrong password
// costs. It returns the hash checked, whether pw matched a real hash, and
// whether the hasher wants it re-hashed.
func (p Passwords) verify(ctx context.Context, pc *provider.PasswordConfig, acc *core.Account, pw string) (hash string, ok, rehash bool, err error) {
	if acc == nil || acc.PasswordHash == nil {
		_, _, _ = pc.Hasher.Verify(ctx, p.a.dummyHash, pw)
		return p.a.dummyHash, false, false, nil
	}
	hash = *acc.PasswordHash
	ok, rehash, err = pc.Hasher.Verify(ctx, hash, pw)
	if err != nil {
		return hash, false, false, fmt.Errorf("%s: verifying the password of user %q: %w", pwNeeded, acc.UserID, err)
	}
	return hash, ok, rehash, nil
}

// passwordAccountOf returns the user's password account, or nil.
func (a *Auth) passwordAccountOf(ctx context.Context, userID string) (*core.Account, error) {
	return call(a, pwNeeded, func(g core.AccountGetter) (*core.Account, error) {
		return g.GetAccount(ctx, userID, core.PasswordProvider)
	})
}

// mailURL is the URL of a handler route under BaseURL with the query.
func (a *Auth) mailURL(route string, q url.Values) string {
	if a.settings.BaseURL == "" {
		return ""
	}
	u := a.settings.BaseURL + "/" + route
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// send hands a password e-mail to the provider's sender.
func (p Passwords) send(ctx context.Context, pc *provider.PasswordConfig, req provider.VerificationRequest) error {
	req.From, req.ProviderID = pc.From, pc.ID
	if err := pc.SendVerificationRequest(ctx, req); err != nil {
		return emailRefusal(fmt.Errorf("%s: sending the %s e-mail: %w", pwNeeded, req.Purpose, err))
	}
	return nil
}

// notifyOwner mails the owner of a taken address that someone signed up
// with it: a link to the sign-in page, no token.
func (p Passwords) notifyOwner(ctx context.Context, pc *provider.PasswordConfig, email string) error {
	return p.send(ctx, pc, provider.VerificationRequest{Identifier: email, Purpose: provider.PurposeAccountExists,
		URL: p.a.mailURL("signin", nil), Expires: p.a.now()})
}

// codeSpecOf is the provider's code settings for a purpose; nil when
// codes are off.
func codeSpecOf(pc *provider.PasswordConfig, purpose provider.Purpose) *codeSpec {
	if !pc.Codes {
		return nil
	}
	return &codeSpec{purpose: string(purpose), maxAge: pc.CodeMaxAge, attempts: pc.CodeAttempts}
}

// specOf is codeSpecOf for checking a code: with codes off, the default
// settings (no code was issued, so none is found, but the shape check and
// the cap still apply).
func specOf(pc *provider.PasswordConfig, purpose provider.Purpose) codeSpec {
	if s := codeSpecOf(pc, purpose); s != nil {
		return *s
	}
	return codeSpec{purpose: string(purpose), maxAge: provider.DefaultCodeMaxAge, attempts: provider.DefaultCodeAttempts}
}

// mailWithTokens stores a link token (and a code) for identifier and
// sends the e-mail of the purpose to email, its link at route; the tokens
// are removed again when sending fails.
//
// The link's query is link (the address, and what else the tokens are
// bound to) with the token.
func (p Passwords) mailWithTokens(ctx context.Context, pc *provider.PasswordConfig, purpose provider.Purpose, route, identifier, email string, link url.Values, binding string) error {
	token, err := randomHex(emailTokenBytes)
	if err != nil {
		return err
	}
	is, err := p.a.issue(ctx, pwNeeded, identifier, token, string(purpose), pc.LinkMaxAge, codeSpecOf(pc, purpose), binding)
	if err != nil {
		return err
	}
	if purpose == provider.PurposeVerifyEmail && binding != "" {
		// The link's binding: what lets the browser that signed up
		// confirm the link without typing the password.
		v := core.VerificationToken{Identifier: identifier, Token: boundLinkToken(p.a.secrets[0], token, binding), Expires: is.expires}
		if _, err := call(p.a, pwNeeded, func(c core.VerificationTokenCreator) (*core.VerificationToken, error) {
			return c.CreateVerificationToken(ctx, v)
		}); err != nil {
			return p.a.forget(ctx, pwNeeded, is, err)
		}
		is.keys = append(is.keys, core.VerificationTokenKey{Identifier: identifier, Token: v.Token})
	}
	req := provider.VerificationRequest{Identifier: email, Purpose: purpose, Token: token, Code: is.code, Expires: is.expires,
		URL: p.a.mailURL(route, withToken(link, token))}
	if err := p.send(ctx, pc, req); err != nil {
		return p.a.forget(ctx, pwNeeded, is, err)
	}
	return nil
}

// verificationDue reports whether a verification e-mail may go to the
// address now, and counts it: one per code lifetime (CodeMaxAge, or its
// default), so that correct-password sign-ins to an unverified account
// neither flood the address nor keep several codes alive at once (each
// live code would divide the attempt cap's strength). A limiter failure
// sends nothing (it is logged): the owner can sign in again.
func (p Passwords) verificationDue(ctx context.Context, pc *provider.PasswordConfig, email string) bool {
	spec := specOf(pc, provider.PurposeVerifyEmail)
	sum := sha256.Sum256([]byte(email))
	res, err := p.a.limiter.Allow(ctx, "authport:verify-mail:"+hex.EncodeToString(sum[:16]), ratelimit.Limit{Events: 1, Period: spec.maxAge})
	if err != nil {
		p.a.log.ErrorContext(ctx, "authport: counting a verification e-mail failed; not sending it", "error", err)
		return false
	}
	return res.Allowed
}

// withToken returns a copy of q with the token parameter.
func withToken(q url.Values, token string) url.Values {
	out := url.Values{"token": {token}}
	for k, v := range q {
		out[k] = v
	}
	return out
}

// sendVerification mails the address's verification link (and code);
// username, when set (normalised), is the username chosen at sign-up:
// the link carries it, and the tokens are issued for it (see
// verifyIdentifier).
func (p Passwords) sendVerification(ctx context.Context, pc *provider.PasswordConfig, email, username, binding string) error {
	link := url.Values{"email": {email}}
	if username != "" {
		link.Set("username", username)
	}
	return p.mailWithTokens(ctx, pc, provider.PurposeVerifyEmail, "password/verify", verifyIdentifier(email, username), email, link, binding)
}

// verifyIdentifier is the identifier of the verification tokens of the
// address, issued for the username chosen at sign-up ("" for none): a
// token or code issued for one username is not found under another, so
// the username cannot be changed between the e-mail and its use.
func verifyIdentifier(email, username string) string {
	if username == "" {
		return verifyIdentifierPrefix + email
	}
	return verifyUsernamePrefix + username + ":" + email
}

// SignInRequest is a password sign-in.
type SignInRequest struct {
	// Identifier is the e-mail address or (with usernames on) the
	// username.
	Identifier string
	Password   string
	// Binding is the browser binding of the code in the verification
	// e-mail sent again when the address is not verified yet.
	Binding string
}

// SignIn signs in with a password, through the one sign-in pipeline: the
// SignIn callback, then a database session or the JWT's claims, then the
// SignIn event. Every refusal is the same error, [CodeCredentialsSignin]:
// an unknown address or username (checked against a dummy hash, so that it
// costs what a wrong password costs), a user without a password, a wrong
// password, and an address not verified yet (whose verification e-mail is
// then sent again, so the owner can finish). When the hasher says the hash
// is outdated, it is re-hashed and swapped in (a concurrent change wins).
// A password of an impossible shape (not UTF-8, a NUL byte, oversized) is
// refused with [CodeBadRequest] before any lookup.
func (p Passwords) SignIn(ctx context.Context, req SignInRequest) (*SignIn, error) {
	a := p.a
	pc, err := p.provider()
	if err != nil {
		return nil, err
	}
	pw, err := checkShape(req.Password)
	if err != nil {
		return nil, err
	}
	user, err := p.lookup(ctx, pc, req.Identifier)
	if err != nil {
		return nil, err
	}
	acc, err := a.passwordOf(ctx, user)
	if err != nil {
		return nil, err
	}
	hash, ok, rehash, err := p.verify(ctx, pc, acc, pw)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errPasswordSignIn
	}
	if user.Email != "" && user.EmailVerified == nil && !pc.AllowUnverifiedSignIn {
		// Told apart from a wrong password nowhere; the owner gets the
		// e-mail to finish with, once per code lifetime at most.
		if p.verificationDue(ctx, pc, user.Email) {
			if err := p.sendVerification(ctx, pc, user.Email, "", req.Binding); err != nil {
				a.log.ErrorContext(ctx, "authport: sending the verification e-mail again failed", "error", err)
			}
		}
		return nil, errPasswordSignIn
	}
	if rehash {
		hash = p.rehash(ctx, pc, acc.Key(), hash, pw)
	}
	return p.complete(ctx, pc, *user, acc, hash, p.hashUnchanged(user.ID, hash))
}

// hashUnchanged returns the check a password sign-in makes once its
// session exists: the user's password hash must still be the one the
// password was verified against (or re-hashed into). A reset or change
// that swapped it while the sign-in was hashing (Argon2 takes a while)
// has ended the user's sessions before this one was made; the sign-in is
// then refused like a wrong password, and its session deleted.
func (p Passwords) hashUnchanged(userID, verified string) func(context.Context) error {
	return func(ctx context.Context) error {
		acc, err := p.a.passwordAccountOf(ctx, userID)
		if err != nil {
			return err
		}
		if acc == nil || acc.PasswordHash == nil || subtle.ConstantTimeCompare([]byte(*acc.PasswordHash), []byte(verified)) != 1 {
			return errPasswordSignIn
		}
		return nil
	}
}

// complete runs the sign-in pipeline for a user proven by password: the
// SignIn callback, then the session, confirm (see [SignIn]'s confirm),
// and the SignIn event.
func (p Passwords) complete(ctx context.Context, pc *provider.PasswordConfig, user core.User, acc *core.Account, verified string, confirm func(context.Context) error) (*SignIn, error) {
	acc = withoutHash(acc)
	second, err := p.a.authorize(ctx, SignInParams{ProviderID: pc.ID, Type: provider.TypePassword, User: user, Account: acc})
	if err != nil {
		return nil, err
	}
	return p.a.finish(ctx, &SignIn{ProviderID: pc.ID, User: user, Account: acc, confirm: confirm, requireSecond: second, verifiedHash: verified})
}

// rehash swaps in a new hash of pw for the outdated one and returns the
// hash the account should now hold: the new one when the swap was made,
// else old. Losing the swap to a concurrent change is fine (the sign-in's
// check of the hash then refuses it), and a failure is only logged (the
// sign-in succeeded; the next one tries again).
func (p Passwords) rehash(ctx context.Context, pc *provider.PasswordConfig, key core.AccountKey, old, pw string) string {
	hash, err := pc.Hasher.Hash(ctx, pw)
	if err == nil {
		_, err = p.a.store.SwapPasswordHash(ctx, key, old, hash)
	}
	if err != nil {
		if !errors.Is(err, core.ErrPasswordHashChanged) {
			p.a.log.WarnContext(ctx, "authport: re-hashing a password failed", "error", err)
		}
		return old
	}
	return hash
}

// lookup finds the user an identifier names: an address, or with
// usernames on a username; nil when it names nobody (or cannot name
// anybody).
func (p Passwords) lookup(ctx context.Context, pc *provider.PasswordConfig, identifier string) (*core.User, error) {
	a := p.a
	if strings.Contains(identifier, "@") {
		email, err := NormalizeEmail(identifier)
		if err != nil {
			return nil, nil
		}
		return call(a, pwNeeded, func(g core.UserByEmailGetter) (*core.User, error) {
			return g.GetUserByEmail(ctx, email)
		})
	}
	if !pc.Usernames {
		return nil, nil
	}
	name, err := core.NormalizeUsername(identifier)
	if err != nil {
		return nil, nil
	}
	return call(a, pwNeeded, func(g core.UserByUsernameGetter) (*core.User, error) {
		return g.GetUserByUsername(ctx, name)
	})
}

// boundLinkToken is what the store keeps for a verification link sent to
// the browser with the binding: proof that a request holding both the
// link's token and that browser's binding comes from the browser that
// signed up.
func boundLinkToken(secret, token, binding string) string {
	return keyedHash(secret, "authport bound link", string(provider.PurposeVerifyEmail), token, binding)
}

// VerifyEmail proves a sign-up's address with the link's token or the
// code, and signs the user in (the one pipeline).
//
// A link's token alone is not enough: mail scanners open links, and
// whoever signed up with someone else's address hopes its owner will
// follow a link they did not ask for. A token verifies only with
// proof.Binding of the browser that signed up (the sign-up's binding,
// see [SignUpRequest]) or with proof.Password, the account's password,
// checked like a sign-in. A code is bound to its browser already.
//
// proof.Username is the username the e-mail carries (the link's username
// parameter), when the sign-up chose one: the token and the code were
// issued for it, and verify nothing with another. Once the address is
// verified the user gets that username, unless they have one or another
// user has taken it since the sign-up: they are then signed in without it,
// and [SignIn.UsernameTaken] says so (ask for another).
//
// Every refusal (an unknown, used, expired or foreign token or code, a
// token without its binding or the password, a wrong password, a username
// the e-mail did not carry) is the same [CodeVerification] error, and changes nothing but the proof used:
// a token refused for want of the binding or the password stays usable.
func (p Passwords) VerifyEmail(ctx context.Context, email string, proof Proof) (*SignIn, error) {
	a := p.a
	pc, err := p.provider()
	if err != nil {
		return nil, err
	}
	email, err = NormalizeEmail(email)
	if err != nil {
		return nil, errVerificationFailed
	}
	username := ""
	if strings.TrimSpace(proof.Username) != "" {
		if username, err = core.NormalizeUsername(proof.Username); err != nil || !pc.Usernames {
			return nil, errVerificationFailed
		}
	}
	identifier := verifyIdentifier(email, username)
	if proof.Code == "" {
		if err := p.confirmLink(ctx, pc, identifier, email, proof); err != nil {
			return nil, err
		}
	}
	if _, err := a.use(ctx, pwNeeded, identifier, proof, specOf(pc, provider.PurposeVerifyEmail)); err != nil {
		return nil, err
	}
	user, err := call(a, pwNeeded, func(g core.UserByEmailGetter) (*core.User, error) {
		return g.GetUserByEmail(ctx, email)
	})
	if err != nil {
		return nil, err
	}
	if user == nil {
		return nil, errVerificationFailed
	}
	acc, err := a.passwordAccountOf(ctx, user.ID)
	if err != nil {
		return nil, err
	}
	second, err := a.authorize(ctx, SignInParams{ProviderID: pc.ID, Type: provider.TypePassword, User: *user, Account: withoutHash(acc)})
	if err != nil {
		return nil, err
	}
	taken := false
	if username != "" && user.Username == "" {
		if user, taken, err = p.giveUsername(ctx, *user, username); err != nil {
			return nil, err
		}
	}
	if user, err = a.markVerified(ctx, *user); err != nil {
		return nil, err
	}
	// The link or code proved the mailbox, not the password: the session
	// records "email", so that step-up asking for "pwd" is not met by it.
	si, err := a.finish(ctx, &SignIn{ProviderID: pc.ID, User: *user, Account: withoutHash(acc), requireSecond: second, amr: []string{AMREmail}})
	if si != nil {
		si.UsernameTaken = taken
	}
	return si, err
}

// giveUsername gives the user the username chosen at sign-up, with the
// address's verification in the same update; taken reports that another
// user holds it (nothing was written: the caller marks the address
// verified alone).
func (p Passwords) giveUsername(ctx context.Context, user core.User, username string) (_ *core.User, taken bool, err error) {
	now := p.a.now()
	verified := user.EmailVerified
	if verified == nil {
		verified = &now
	}
	updated, err := call(p.a, pwNeeded, func(u core.UserUpdater) (*core.User, error) {
		return u.UpdateUser(ctx, core.UserUpdate{ID: user.ID, Username: core.Set(username), EmailVerified: core.Set(verified)})
	})
	switch {
	case errors.Is(err, core.ErrAlreadyExists) && !isAdapterFailure(err):
		return &user, true, nil
	case err != nil:
		return nil, false, err
	}
	emit(p.a, ctx, "updateUser", p.a.events.UpdateUser, *updated)
	return updated, false, nil
}

// confirmLink checks what must come with a verification link's token: the
// password of the address's user (checked as a sign-in checks it, against
// the dummy hash when there is none), or else the binding of the browser
// the link was sent to, whose bound token it uses. Every failure is
// errVerificationFailed.
func (p Passwords) confirmLink(ctx context.Context, pc *provider.PasswordConfig, identifier, email string, proof Proof) error {
	a := p.a
	switch {
	case proof.Token == "":
		return errVerificationFailed
	case proof.Password != "":
		pw, err := checkShape(proof.Password)
		if err != nil {
			return errVerificationFailed
		}
		user, err := call(a, pwNeeded, func(g core.UserByEmailGetter) (*core.User, error) {
			return g.GetUserByEmail(ctx, email)
		})
		if err != nil {
			return err
		}
		acc, err := a.passwordOf(ctx, user)
		if err != nil {
			return err
		}
		if _, ok, _, err := p.verify(ctx, pc, acc, pw); err != nil || !ok {
			return cmp.Or[error](err, errVerificationFailed)
		}
		return nil
	case proof.Binding != "":
		for _, secret := range a.secrets {
			v, err := a.useKey(ctx, pwNeeded, core.VerificationTokenKey{Identifier: identifier, Token: boundLinkToken(secret, proof.Token, proof.Binding)})
			if err != nil {
				return err
			}
			if v != nil {
				if v.Expired(a.now()) {
					return errVerificationFailed
				}
				return nil
			}
		}
	}
	return errVerificationFailed
}

// markVerified sets the user's emailVerified to now unless it is set, and
// runs [Events.UpdateUser].
func (a *Auth) markVerified(ctx context.Context, user core.User) (*core.User, error) {
	if user.EmailVerified != nil {
		return &user, nil
	}
	now := a.now()
	updated, err := call(a, pwNeeded, func(u core.UserUpdater) (*core.User, error) {
		return u.UpdateUser(ctx, core.UserUpdate{ID: user.ID, EmailVerified: core.Set(&now)})
	})
	if err != nil {
		return nil, err
	}
	emit(a, ctx, "updateUser", a.events.UpdateUser, *updated)
	return updated, nil
}

// resetIdentifier is the identifier of a reset e-mail's tokens: the
// address and a fingerprint of the password hash it resets, so that the
// tokens die once the password changes (by this reset, the e-mail's other
// token, or a change).
func resetIdentifier(email string, acc *core.Account) string {
	hash := ""
	if acc != nil && acc.PasswordHash != nil {
		hash = *acc.PasswordHash
	}
	sum := sha256.Sum256([]byte("authport reset\x00" + hash))
	return resetIdentifierPrefix + email + ":" + hex.EncodeToString(sum[:8])
}

// RequestReset mails a reset link (and code) when the address belongs to
// a user with a password, and nothing otherwise; the answer is the same
// for every address (only an address that is not one is refused, with
// [CodeBadRequest]).
func (p Passwords) RequestReset(ctx context.Context, email, binding string) error {
	a := p.a
	pc, err := p.provider()
	if err != nil {
		return err
	}
	if email, err = NormalizeEmail(email); err != nil {
		return badInput("e-mail address: %w", err)
	}
	user, err := call(a, pwNeeded, func(g core.UserByEmailGetter) (*core.User, error) {
		return g.GetUserByEmail(ctx, email)
	})
	if err != nil || user == nil {
		return err
	}
	acc, err := a.passwordAccountOf(ctx, user.ID)
	if err != nil || acc == nil || acc.PasswordHash == nil {
		return err
	}
	return p.mailWithTokens(ctx, pc, provider.PurposeResetPassword, "password/reset", resetIdentifier(email, acc), email, url.Values{"email": {email}}, binding)
}

// backgroundMailTimeout bounds a password e-mail sent off the request
// path ([Passwords.RequestResetInBackground]).
const backgroundMailTimeout = time.Minute

// RequestResetInBackground is [Passwords.RequestReset] off the request
// path: it refuses an address that is not one ([CodeBadRequest]) at once,
// and otherwise returns at once, before any lookup, while the lookup, the
// token writes and the mail are done in the background (with the request's
// values but not its cancellation, for at most a minute; a failure is
// logged, without the token or the code). So the answer takes the same
// time for every address, whether the mailer is slow or not. [Auth.Wait]
// waits for it.
func (p Passwords) RequestResetInBackground(ctx context.Context, email, binding string) error {
	if _, err := p.provider(); err != nil {
		return err
	}
	if _, err := NormalizeEmail(email); err != nil {
		return badInput("e-mail address: %w", err)
	}
	p.a.inBackground(ctx, backgroundMailTimeout, "sending a password reset e-mail", func(ctx context.Context) error {
		return p.RequestReset(ctx, email, binding)
	})
	return nil
}

// inBackground runs work in a goroutine tracked by [Auth.Wait], with ctx's
// values but not its cancellation, for at most timeout; an error is logged
// as what failed (errors of this package carry no secrets).
func (a *Auth) inBackground(ctx context.Context, timeout time.Duration, what string, work func(context.Context) error) {
	a.background.Add(1)
	go func() {
		defer a.background.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		if err := work(ctx); err != nil {
			a.log.ErrorContext(ctx, "authport: "+what+" failed", "error", err)
		}
	}()
}

// Wait waits for the work started off the request path (the e-mails of
// [Passwords.RequestResetInBackground]) to end: for a graceful shutdown,
// and for tests.
func (a *Auth) Wait() { a.background.Wait() }

// Reset sets a new password with a reset e-mail's link token or code:
// the proof is used (once: of concurrent uses exactly one resets), the
// hash read before is swapped for the new one, every session of the user
// ends (deleteSessionsByUserId, with database sessions), and the address
// counts as verified. A password the policy refuses is refused before
// the proof is used; a bad proof gives [CodeVerification] and changes
// nothing.
//
// When the store fails after the proof was used and before the hash is
// swapped, the proof's token is put back (retried in the background while
// the store is failing), so that the same link or code works again; when
// it fails after the swap, ending the sessions is retried in the
// background, and the error says the password was changed.
func (p Passwords) Reset(ctx context.Context, email string, proof Proof, newPassword string) error {
	a := p.a
	pc, err := p.provider()
	if err != nil {
		return err
	}
	pw, err := p.validate(ctx, pc, newPassword)
	if err != nil {
		return err
	}
	if email, err = NormalizeEmail(email); err != nil {
		return errVerificationFailed
	}
	user, err := call(a, pwNeeded, func(g core.UserByEmailGetter) (*core.User, error) {
		return g.GetUserByEmail(ctx, email)
	})
	if err != nil {
		return err
	}
	var acc *core.Account
	if user != nil {
		if acc, err = a.passwordAccountOf(ctx, user.ID); err != nil {
			return err
		}
	}
	used, err := a.use(ctx, pwNeeded, resetIdentifier(email, acc), proof, specOf(pc, provider.PurposeResetPassword))
	if err != nil {
		return err
	}
	if acc == nil || acc.PasswordHash == nil {
		return errVerificationFailed
	}
	hash, err := pc.Hasher.Hash(ctx, pw)
	if err != nil {
		return a.restoreToken(ctx, pwNeeded, used, fmt.Errorf("%s: hashing the password: %w", pwNeeded, err))
	}
	if err := p.swap(ctx, acc, hash); err != nil {
		if errors.Is(err, core.ErrPasswordHashChanged) {
			return errVerificationFailed
		}
		// The token is put back: it is bound to the hash read before, so
		// it resets nothing if the swap did happen (its answer lost).
		return a.restoreToken(ctx, pwNeeded, used, err)
	}
	// The password is reset: the sessions end first (retried in the
	// background if the store fails), then the address counts as proven.
	err = p.endSessions(ctx, user.ID, "", "all")
	if _, verr := a.markVerified(ctx, *user); verr != nil {
		err = errors.Join(err, verr)
	}
	return err
}

// swap replaces the account's hash (as read) with hash.
func (p Passwords) swap(ctx context.Context, acc *core.Account, hash string) error {
	old := ""
	if acc.PasswordHash != nil {
		old = *acc.PasswordHash
	}
	swapped, err := call(p.a, pwNeeded, func(s core.PasswordHashSwapper) (*core.Account, error) {
		return s.SwapPasswordHash(ctx, acc.Key(), old, hash)
	})
	if err == nil && swapped == nil {
		err = fmt.Errorf("%s: the password account of user %q is gone: %w", pwNeeded, acc.UserID, core.ErrNotFound)
	}
	return err
}

// endSessions ends the user's database sessions but except (all when ""),
// and runs [Events.SessionsRevoked]; with JWT sessions there are none
// stored to end. It follows a password change already made: when it fails
// (the store failing) it is retried in the background (see retryLater),
// since sessions a changed password must end would otherwise stay, and
// the error says so.
func (p Passwords) endSessions(ctx context.Context, userID, except, scope string) error {
	if p.a.strategy != StrategyDatabase {
		// No sessions stored; the trusted devices end all the same.
		if err := p.a.endDeviceTrust(ctx, userID); err != nil {
			go retryLater(context.WithoutCancel(ctx), func(ctx context.Context) error { return p.a.endDeviceTrust(ctx, userID) })
			return fmt.Errorf("%s: the password was changed, but ending the trust of the user's devices failed (retrying in the background for %v): %w", pwNeeded, cleanupRetryWindow, err)
		}
		return nil
	}
	revoke := func(ctx context.Context) error {
		_, err := Sessions{p.a}.revoke(ctx, userID, except, scope)
		return err
	}
	if err := revoke(ctx); err != nil {
		go retryLater(context.WithoutCancel(ctx), revoke)
		return fmt.Errorf("%s: the password was changed, but ending the user's other sessions failed (retrying in the background for %v): %w", pwNeeded, cleanupRetryWindow, err)
	}
	return nil
}

// Change changes a signed-in user's password: current must be their
// password (else [CodeCredentialsSignin]); the hash read is swapped for the
// new one (a concurrent change makes it fail with an error matching
// [core.ErrPasswordHashChanged]: try again), and every other session of
// the user ends (keep is the current session's token; "" ends them all).
func (p Passwords) Change(ctx context.Context, userID, keep, current, newPassword string) error {
	a := p.a
	pc, err := p.provider()
	if err != nil {
		return err
	}
	cur, err := checkShape(current)
	if err != nil {
		return err
	}
	pw, err := p.validate(ctx, pc, newPassword)
	if err != nil {
		return err
	}
	acc, err := a.passwordAccountOf(ctx, userID)
	if err != nil {
		return err
	}
	if _, ok, _, err := p.verify(ctx, pc, acc, cur); err != nil || !ok {
		return cmp.Or[error](err, errPasswordSignIn)
	}
	newHash, err := pc.Hasher.Hash(ctx, pw)
	if err != nil {
		return fmt.Errorf("%s: hashing the password: %w", pwNeeded, err)
	}
	if err := p.swap(ctx, acc, newHash); err != nil {
		return err
	}
	scope := "others"
	if keep == "" {
		scope = "all"
	}
	return p.endSessions(ctx, userID, keep, scope)
}

// Set gives a signed-in user who has no password (who signed up another
// way) a password account. A user who has one gets [ErrHasPassword].
func (p Passwords) Set(ctx context.Context, userID, newPassword string) error {
	a := p.a
	pc, err := p.provider()
	if err != nil {
		return err
	}
	pw, err := p.validate(ctx, pc, newPassword)
	if err != nil {
		return err
	}
	user, err := a.User(ctx, userID)
	if err != nil {
		return err
	}
	if user == nil {
		return fmt.Errorf("%s: user %q: %w", pwNeeded, userID, core.ErrNotFound)
	}
	acc, err := a.passwordAccountOf(ctx, userID)
	if err != nil {
		return err
	}
	if acc != nil {
		return ErrHasPassword
	}
	hash, err := pc.Hasher.Hash(ctx, pw)
	if err != nil {
		return fmt.Errorf("%s: hashing the password: %w", pwNeeded, err)
	}
	_, err = a.linkAccount(ctx, pwNeeded, *user, passwordAccount(userID, hash), nil)
	if errors.Is(err, core.ErrAlreadyExists) {
		return ErrHasPassword
	}
	return err
}

// HasPassword reports whether the user has a password account.
func (p Passwords) HasPassword(ctx context.Context, userID string) (bool, error) {
	acc, err := p.a.passwordAccountOf(ctx, userID)
	return acc != nil && acc.PasswordHash != nil, err
}

// setUpPasswords finds the password provider, if any (one at most), and
// makes the dummy hash with its hasher.
func (a *Auth) setUpPasswords() error {
	for _, p := range a.list {
		pc, ok := p.(*provider.PasswordConfig)
		if !ok {
			continue
		}
		if a.pw != nil {
			return fmt.Errorf("%w: more than one password provider (%q and %q): configure one", core.ErrInvalidConfig, a.pw.ID, pc.ID)
		}
		a.pw = pc
	}
	if a.pw == nil {
		return nil
	}
	if a.settings.BaseURL == "" {
		return fmt.Errorf("%w: the password provider %q needs BaseURL (AUTH_URL): its verification and reset e-mails link to BaseURL/password/…", core.ErrInvalidConfig, a.pw.ID)
	}
	var err error
	if a.dummyHash, err = password.DummyHash(context.Background(), a.pw.Hasher); err != nil {
		return fmt.Errorf("%w: the password provider's hasher cannot hash: %w", core.ErrInvalidConfig, err)
	}
	return nil
}
