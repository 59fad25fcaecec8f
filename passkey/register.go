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
	"github.com/authport/authport/passkey/internal/refusal"
)

// checkClient checks the challenge, origin and RP id hash first, so that
// these failures get their own errors; go-webauthn checks them again.
func checkClient(rp *relyingParty, state *challengeState, cd protocol.CollectedClientData, rpIDHash []byte) error {
	if subtle.ConstantTimeCompare([]byte(cd.Challenge), []byte(state.Session.Challenge)) != 1 {
		return refusal.ErrChallengeMismatch
	}
	if !protocol.IsOriginInHaystack(cd.Origin, rp.origins) {
		return fmt.Errorf("%w: the browser reports %q, the relying party has %v", refusal.ErrOriginMismatch, cd.Origin, rp.origins)
	}
	want := sha256.Sum256([]byte(rp.id))
	if !bytes.Equal(rpIDHash, want[:]) {
		return fmt.Errorf("%w: the authenticator signed for another relying party than %q", refusal.ErrRPIDMismatch, rp.id)
	}
	return nil
}

func (p *Passkeys) register(ctx context.Context, rp *relyingParty, state *challengeState, data []byte, user *core.User) (*auth.SignIn, error) {
	reg := state.RegisterData
	if reg == nil || reg.Email == "" {
		return nil, refuse(fmt.Errorf("%w: the challenge has no registration data", refusal.ErrChallengeMismatch))
	}
	switch {
	case user != nil && reg.ID != "" && reg.ID != user.ID:
		return nil, refuse(fmt.Errorf("%w: the options were made for another user", refusal.ErrChallengeMismatch))
	case user == nil && reg.ID != "":
		return nil, refuse(fmt.Errorf("%w: the options were made for a signed-in user; sign in again", refusal.ErrChallengeMismatch))
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(data)
	if err != nil {
		return nil, refuse(fmt.Errorf("%w: %w", refusal.ErrInvalidCredential, err))
	}
	if err := checkClient(rp, state, parsed.Response.CollectedClientData, parsed.Response.AttestationObject.AuthData.RPIDHash); err != nil {
		return nil, refuse(err)
	}
	cred, err := rp.wa.CreateCredential(ceremonyUser{id: state.Session.UserID, name: reg.Email}, state.Session, parsed)
	if err != nil {
		return nil, refuse(verificationError(err))
	}
	if err := p.claimChallenge(state); err != nil {
		return nil, err
	}
	au := toAuthenticator(cred, parsed.Response.Transports)
	return p.auth.RegisterPasskey(ctx, rp.providerID, user, core.User{Email: reg.Email, Name: reg.Name}, au)
}
