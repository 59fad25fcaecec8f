package passkey

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// checkClient checks the challenge, origin and RP id hash first, so that
// these failures get their own errors; go-webauthn checks them again.
func checkClient(rp *relyingParty, state *challengeState, cd protocol.CollectedClientData, rpIDHash []byte) error {
	if subtle.ConstantTimeCompare([]byte(cd.Challenge), []byte(state.Session.Challenge)) != 1 {
		return ErrChallengeMismatch
	}
	if !protocol.IsOriginInHaystack(cd.Origin, rp.origins) {
		return fmt.Errorf("%w: the browser reports %q, the relying party has %v", ErrOriginMismatch, cd.Origin, rp.origins)
	}
	want := sha256.Sum256([]byte(rp.id))
	if !bytes.Equal(rpIDHash, want[:]) {
		return fmt.Errorf("%w: the authenticator signed for another relying party than %q", ErrRPIDMismatch, rp.id)
	}
	return nil
}

func (p *Passkeys) register(ctx context.Context, rp *relyingParty, state *challengeState, data []byte, user *core.User) (*auth.SignIn, error) {
	reg := state.RegisterData
	if reg == nil || reg.Email == "" {
		return nil, fmt.Errorf("%w: the challenge cookie has no registration data", ErrChallengeMismatch)
	}
	switch {
	case user != nil && reg.ID != "" && reg.ID != user.ID:
		return nil, fmt.Errorf("%w: the options were made for another user", ErrChallengeMismatch)
	case user == nil && reg.ID != "":
		return nil, fmt.Errorf("%w: the options were made for a signed-in user; sign in again", ErrChallengeMismatch)
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidCredential, err)
	}
	if err := checkClient(rp, state, parsed.Response.CollectedClientData, parsed.Response.AttestationObject.AuthData.RPIDHash); err != nil {
		return nil, err
	}
	cred, err := rp.wa.CreateCredential(ceremonyUser{id: state.Session.UserID, name: reg.Email}, state.Session, parsed)
	if err != nil {
		return nil, verificationError(err)
	}
	if err := p.claimChallenge(state); err != nil {
		return nil, err
	}
	au := toAuthenticator(cred, parsed.Response.Transports)
	return p.auth.RegisterWebAuthn(ctx, rp.providerID, user, core.User{Email: reg.Email, Name: reg.Name}, au)
}
