package passkey

import (
	"fmt"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/authport/authport/core"
)

// relyingParty is what one ceremony runs with.
type relyingParty struct {
	providerID string
	id, name   string
	origins    []string
	uv         protocol.UserVerificationRequirement
	wa         *webauthn.WebAuthn
}

// relyingParty resolves the relying party of the provider: the provider's
// settings, else the Config's, else the base URL's. New has checked that
// one of them is set; the request (its Host) is never used.
func (p *Passkeys) relyingParty(providerID string) (*relyingParty, error) {
	c, err := p.auth.Edge().WebAuthnProvider(providerID)
	if err != nil {
		return nil, err
	}
	rp := &relyingParty{providerID: providerID, id: c.RPID, name: c.RPName, uv: protocol.UserVerificationRequirement(c.UserVerification)}
	if rp.id == "" {
		rp.id = p.rpID
	}
	if rp.id == "" {
		rp.id = p.baseHost
	}
	if rp.name == "" {
		rp.name = p.rpName
	}
	if rp.name == "" {
		rp.name = rp.id
	}
	switch {
	case c.RPOrigin != "":
		o, err := origin(c.RPOrigin)
		if err != nil {
			return nil, fmt.Errorf("%w: passkey: provider %q RPOrigin: %w", core.ErrInvalidConfig, providerID, err)
		}
		rp.origins = []string{o}
	case len(p.origins) > 0:
		for _, o := range p.origins {
			o, _ = origin(o) // checked by New
			rp.origins = append(rp.origins, o)
		}
	case p.baseOrigin != "":
		rp.origins = []string{p.baseOrigin}
	}
	if rp.id == "" || len(rp.origins) == 0 {
		return nil, fmt.Errorf("%w: passkey: provider %q: no relying party id or origin configured; set auth.Config.BaseURL, or Config.RPID and Config.Origins", core.ErrInvalidConfig, providerID)
	}
	if rp.uv == "" {
		rp.uv = protocol.VerificationPreferred
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:                  rp.id,
		RPDisplayName:         rp.name,
		RPOrigins:             rp.origins,
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementPreferred,
			UserVerification: rp.uv,
		},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: p.timeout, TimeoutUVD: p.timeout},
			Registration: webauthn.TimeoutConfig{Timeout: p.timeout, TimeoutUVD: p.timeout},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: passkey: provider %q: relying party %q, origins %v: %w", core.ErrInvalidConfig, providerID, rp.id, rp.origins, err)
	}
	rp.wa = wa
	return rp, nil
}
