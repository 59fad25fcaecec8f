package passkey

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/passkey/internal/refusal"
)

// SecondFactorOptions makes the options of a passkey answering as a
// second factor: for the pending sign-in whose token is pendingToken
// (core/auth's [auth.PendingSignIn]; userID is then passed on to core/auth
// as given, and may be ""), or, with pendingToken "", for the signed-in
// user userID re-authenticating (step-up). It returns the body to send as
// JSON (an [OptionsResponse] whose action is "authenticate", which the
// page script runs as any other) and the challenge to remember for
// [Passkeys.Timeout] and give back to [Passkeys.VerifySecondFactor], as
// with [Passkeys.Options].
//
// The allowed credentials are the user's passkey factors
// ([auth.Factors.PasskeyCredentials]) and no other; user verification is
// required (a PIN or biometric on the authenticator, RFC 8176's "user" on
// top of "hwk"). The challenge is bound to the pending sign-in (a hash of
// its token, never the token) or the user: it serves no other, and never
// an ordinary passkey sign-in.
//
// A user without a passkey factor, or a call with neither a pending token
// nor a user, is refused ([auth.CodeWebAuthnVerification]); an expired,
// used or forged pending token is refused by core/auth with its code. An
// error without a code is a failure of the server.
func (p *Passkeys) SecondFactorOptions(ctx context.Context, providerID string, userID, pendingToken string) (body any, challenge string, err error) {
	rp, err := p.relyingParty(providerID)
	if err != nil {
		return nil, "", err
	}
	bind, err := secondFactorBinding(userID, pendingToken)
	if err != nil {
		return nil, "", err
	}
	authenticators, err := p.auth.Factors().PasskeyCredentials(ctx, userID, pendingToken)
	if err != nil {
		return nil, "", err
	}
	if len(authenticators) == 0 {
		return nil, "", refuse(fmt.Errorf("%w: the user has no passkey as a second factor", refusal.ErrNotAllowed))
	}
	descriptors := make([]protocol.CredentialDescriptor, 0, len(authenticators))
	for _, a := range authenticators {
		d, err := descriptor(a)
		if err != nil {
			return nil, "", err
		}
		descriptors = append(descriptors, d)
	}
	assertion, session, err := rp.wa.BeginDiscoverableLogin(
		webauthn.WithAllowedCredentials(descriptors),
		webauthn.WithUserVerification(protocol.VerificationRequired),
	)
	if err != nil {
		return nil, "", fmt.Errorf("passkey: second-factor options: %w", err)
	}
	state := challengeState{
		Challenge:    session.Challenge,
		Action:       ActionAuthenticate,
		Provider:     providerID,
		Session:      *session,
		Expires:      p.now().Add(p.timeout),
		SecondFactor: bind,
	}
	if challenge, err = encodeChallenge(state); err != nil {
		return nil, "", err
	}
	return OptionsResponse{Action: ActionAuthenticate, Options: assertion.Response}, challenge, nil
}

// VerifySecondFactor verifies the passkey assertion that answers the
// options of [Passkeys.SecondFactorOptions]: form holds the posted fields
// "action" ("authenticate") and "data" (the credential JSON), challenge
// is what SecondFactorOptions returned, as remembered ("" when nothing
// was), and userID and pendingToken are what were given to it; the
// caller forgets the challenge whatever the outcome.
//
// It checks the challenge (made for this pending sign-in or user, by
// SecondFactorOptions, not expired, serving one verified ceremony), the
// origin and relying party, that the credential is one of the user's
// passkey factors, the signature and the counter, and that the
// authenticator verified its user (the UV flag): an assertion without it
// is refused ([refusal.ErrUserNotVerified]'s text) before core/auth is
// asked anything. Then:
//
//   - for a pending sign-in, [auth.Factors.VerifyPasskey] finishes it
//     (trustDevice asks to trust this browser, [auth.Answer.TrustDevice]):
//     the result is the sign-in the first factor would have made, with its
//     session or JWT claims;
//   - for a re-authentication (pendingToken ""),
//     [auth.Factors.ReauthenticatePasskey] gives the signed-in user userID
//     a fresh sign-in; current is their session token ("" with JWT
//     sessions), which the new session replaces; trustDevice is ignored.
//
// Refusals are [*auth.Error]s with code [auth.CodeWebAuthnVerification],
// or the code core/auth gave them (a used or expired pending sign-in); an
// error without a code is a failure of the server. A refusal changes
// nothing stored.
func (p *Passkeys) VerifySecondFactor(ctx context.Context, providerID string, form url.Values, challenge, userID, pendingToken, current string, trustDevice bool) (*auth.SignIn, error) {
	rp, err := p.relyingParty(providerID)
	if err != nil {
		return nil, err
	}
	state, err := p.readChallenge(challenge)
	if err != nil {
		return nil, refuse(err)
	}
	if state.SecondFactor == nil {
		return nil, refuse(fmt.Errorf("%w: the challenge was not made for a second factor", refusal.ErrChallengeMismatch))
	}
	if err := state.SecondFactor.matches(userID, pendingToken); err != nil {
		return nil, refuse(err)
	}
	if state.Provider != providerID {
		return nil, refuse(fmt.Errorf("%w: the options were made for provider %q", refusal.ErrChallengeMismatch, state.Provider))
	}
	if action := form.Get("action"); action != ActionAuthenticate || state.Action != ActionAuthenticate {
		return nil, refuse(fmt.Errorf("%w: %q (a second factor authenticates)", refusal.ErrInvalidAction, action))
	}
	data := form.Get("data")
	if data == "" {
		return nil, refuse(fmt.Errorf("%w: the form has no data", refusal.ErrInvalidCredential))
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes([]byte(data))
	if err != nil {
		return nil, refuse(fmt.Errorf("%w: %w", refusal.ErrInvalidCredential, err))
	}
	if err := checkClient(rp, state, parsed.Response.CollectedClientData, parsed.Response.AuthenticatorData.RPIDHash); err != nil {
		return nil, refuse(err)
	}
	if !parsed.Response.AuthenticatorData.Flags.UserVerified() {
		return nil, refuse(refusal.ErrUserNotVerified)
	}
	credentialID := base64.StdEncoding.EncodeToString(parsed.RawID)
	// The user's passkey factors now (one removed since the options is
	// refused): go-webauthn checks that the credential is one of them
	// and among the options' allowed credentials.
	owned, err := p.auth.Factors().PasskeyCredentials(ctx, userID, pendingToken)
	if err != nil {
		return nil, err
	}
	creds := make([]webauthn.Credential, 0, len(owned))
	found := false
	for _, a := range owned {
		c, err := toCredential(a)
		if err != nil {
			return nil, err
		}
		found = found || a.CredentialID == credentialID
		creds = append(creds, c)
	}
	if !found {
		return nil, refuse(fmt.Errorf("%w: %s is not a passkey factor of the user", refusal.ErrUnknownCredential, credentialID))
	}
	session := state.Session
	session.UserID = parsed.Response.UserHandle
	// Required whatever the remembered session says.
	session.UserVerification = protocol.VerificationRequired
	if _, err := rp.wa.ValidateLogin(ceremonyUser{id: session.UserID, credentials: creds}, session, parsed); err != nil {
		var unknown *protocol.ErrorUnknownCredential
		if errors.As(err, &unknown) {
			return nil, refuse(fmt.Errorf("%w: %w", refusal.ErrUnknownCredential, err))
		}
		return nil, refuse(verificationError(err))
	}
	if err := p.claimChallenge(state); err != nil {
		return nil, err
	}
	counter := int64(parsed.Response.AuthenticatorData.Counter)
	if pendingToken != "" {
		return p.auth.Factors().VerifyPasskey(ctx, pendingToken, credentialID, counter, true, trustDevice)
	}
	return p.auth.Factors().ReauthenticatePasskey(ctx, userID, current, credentialID, counter, true)
}

// secondFactorBinding is whom a second-factor challenge is for.
func secondFactorBinding(userID, pendingToken string) (*secondFactorFor, error) {
	switch {
	case pendingToken != "":
		return &secondFactorFor{Pending: pendingHash(pendingToken)}, nil
	case userID != "":
		return &secondFactorFor{UserID: userID}, nil
	}
	return nil, refuse(fmt.Errorf("%w: a second factor needs a pending sign-in or a signed-in user", refusal.ErrNotAllowed))
}

// matches checks that the challenge was made for the pending sign-in or
// user given now.
func (b *secondFactorFor) matches(userID, pendingToken string) error {
	switch {
	case pendingToken != "":
		if b.Pending == "" || subtle.ConstantTimeCompare([]byte(b.Pending), []byte(pendingHash(pendingToken))) != 1 {
			return fmt.Errorf("%w: the options were made for another sign-in", refusal.ErrChallengeMismatch)
		}
	case userID != "":
		if b.Pending != "" || b.UserID != userID {
			return fmt.Errorf("%w: the options were made for another sign-in or user", refusal.ErrChallengeMismatch)
		}
	default:
		return fmt.Errorf("%w: a second factor needs a pending sign-in or a signed-in user", refusal.ErrNotAllowed)
	}
	return nil
}

// pendingHash is what a challenge keeps of a pending sign-in's token.
func pendingHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// userVerified reports the UV flag of an assertion, for the ordinary
// sign-in: with it a passkey sign-in is two factors in one.
func userVerified(parsed *protocol.ParsedCredentialAssertionData) bool {
	return parsed.Response.AuthenticatorData.Flags.UserVerified()
}
