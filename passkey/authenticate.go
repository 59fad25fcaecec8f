package passkey

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/passkey/internal/refusal"
)

func (p *Passkeys) authenticate(ctx context.Context, rp *relyingParty, state *challengeState, data []byte, user *core.User) (*auth.SignIn, error) {
	if state.RegisterData != nil {
		return nil, refuse(fmt.Errorf("%w: the challenge was made for a registration", refusal.ErrInvalidAction))
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(data)
	if err != nil {
		return nil, refuse(fmt.Errorf("%w: %w", refusal.ErrInvalidCredential, err))
	}
	credentialID := base64.StdEncoding.EncodeToString(parsed.RawID)
	stored, err := p.auth.Edge().WebAuthnAuthenticator(ctx, credentialID)
	if err != nil {
		return nil, err
	}
	if stored == nil {
		return nil, refuse(fmt.Errorf("%w: %s", refusal.ErrUnknownCredential, credentialID))
	}
	if err := checkClient(rp, state, parsed.Response.CollectedClientData, parsed.Response.AuthenticatorData.RPIDHash); err != nil {
		return nil, refuse(err)
	}
	if user != nil && user.ID != stored.UserID {
		return nil, auth.Fail(auth.CodeOAuthAccountNotLinked, errors.New("the passkey belongs to another user than the one signed in"))
	}
	// The owner's credentials: go-webauthn checks that every allowed
	// credential of the options belongs to the user it verifies for.
	owned, err := p.auth.Authenticators(ctx, stored.UserID)
	if err != nil {
		return nil, err
	}
	creds := make([]webauthn.Credential, 0, len(owned)+1)
	found := false
	for _, a := range owned {
		c, err := toCredential(a)
		if err != nil {
			return nil, err
		}
		found = found || a.CredentialID == stored.CredentialID
		creds = append(creds, c)
	}
	if !found {
		c, err := toCredential(*stored)
		if err != nil {
			return nil, err
		}
		creds = append(creds, c)
	}
	session := state.Session
	session.UserID = parsed.Response.UserHandle
	if _, err := rp.wa.ValidateLogin(ceremonyUser{id: session.UserID, credentials: creds}, session, parsed); err != nil {
		return nil, refuse(verificationError(err))
	}
	if err := p.claimChallenge(state); err != nil {
		return nil, err
	}
	return p.auth.SignInWithPasskeyAssertion(ctx, rp.providerID, credentialID, int64(parsed.Response.AuthenticatorData.Counter), userVerified(parsed), user)
}

// verificationError wraps a go-webauthn failure, keeping its details.
func verificationError(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.DevInfo != "" {
		return fmt.Errorf("%w: %w (%s)", refusal.ErrVerificationFailed, err, pe.DevInfo)
	}
	return fmt.Errorf("%w: %w", refusal.ErrVerificationFailed, err)
}
