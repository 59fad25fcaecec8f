package passkey

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/authport/authport/passkey/internal/refusal"
)

// usedChallenges remembers the challenges that served a verified ceremony
// until they have expired, so that a challenge serves one ceremony even
// when what remembers it (the handler's cookie) is replayed (the cookie is
// stateless, and synced passkeys report no signature counter that would
// catch the replay). It
// holds one entry per successful ceremony of the last Timeout; it is per
// process: several instances behind a load balancer each keep their own.
type usedChallenges struct {
	mu        sync.Mutex
	until     map[string]time.Time
	nextPrune time.Time
}

// claim records challenge as used until until, and reports whether it was
// unused.
func (u *usedChallenges) claim(challenge string, now, until time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.until == nil {
		u.until = map[string]time.Time{}
	}
	if !now.Before(u.nextPrune) {
		for c, t := range u.until {
			if now.After(t) {
				delete(u.until, c)
			}
		}
		u.nextPrune = now.Add(time.Minute)
	}
	if _, ok := u.until[challenge]; ok {
		return false
	}
	u.until[challenge] = until
	return true
}

// claimChallenge marks the state's challenge used, or fails with
// refusal.ErrChallengeReused. It runs once the ceremony has verified, before
// anything is stored.
func (p *Passkeys) claimChallenge(state *challengeState) error {
	now := p.now()
	// Past the challenge's expiry, after which readChallenge refuses it
	// anyway.
	until := now.Add(p.timeout)
	if state.Expires.After(until) {
		until = state.Expires
	}
	if !p.used.claim(state.Challenge, now, until.Add(time.Minute)) {
		return refuse(refusal.ErrChallengeReused)
	}
	return nil
}

// registerData is the user a registration is for, kept in the challenge
// cookie (Auth.js's registerData).
type registerData struct {
	ID    string  `json:"id,omitempty"`
	Email string  `json:"email"`
	Name  *string `json:"name,omitempty"`
}

// challengeState is the challenge [Passkeys.Options] returns and
// [Passkeys.Callback] takes back, as JSON: Auth.js's {challenge,
// registerData}, plus the action, the provider, go-webauthn's session
// data and the end of the ceremony timeout. The handler seals it as the
// "value" claim of Auth.js's challenge cookie.
type challengeState struct {
	Challenge    string               `json:"challenge"`
	RegisterData *registerData        `json:"registerData,omitempty"`
	Action       string               `json:"action"`
	Provider     string               `json:"provider"`
	Session      webauthn.SessionData `json:"session"`
	// Expires is when the options were made plus the timeout, on the
	// Auth's clock; zero (a challenge made before it was kept) is not
	// checked.
	Expires time.Time `json:"expires,omitzero"`
	// SecondFactor, set by [Passkeys.SecondFactorOptions] only, is whom
	// the challenge of a second-factor ceremony was made for; such a
	// challenge serves [Passkeys.VerifySecondFactor] and never
	// [Passkeys.Callback], and the other way round.
	SecondFactor *secondFactorFor `json:"secondFactor,omitempty"`
}

// secondFactorFor binds a second-factor challenge to the pending sign-in
// or the signed-in user it was made for.
type secondFactorFor struct {
	// Pending is the SHA-256 of the pending sign-in's token (base64url),
	// "" for a re-authentication. The token itself is not kept.
	Pending string `json:"pending,omitempty"`
	// UserID is the user re-authenticating, "" for a pending sign-in.
	UserID string `json:"userId,omitempty"`
}

// encodeChallenge returns the state as the challenge to remember.
func encodeChallenge(state challengeState) (string, error) {
	value, err := json.Marshal(state)
	if err != nil {
		return "", fmt.Errorf("passkey: challenge: %w", err)
	}
	return string(value), nil
}

// readChallenge decodes a remembered challenge and checks that it holds
// one and has not expired (the ceremony timeout from its options, on the
// Auth's clock).
func (p *Passkeys) readChallenge(challenge string) (*challengeState, error) {
	if challenge == "" {
		return nil, refusal.ErrChallengeMissing
	}
	var state challengeState
	if json.Unmarshal([]byte(challenge), &state) != nil || state.Challenge == "" || state.Challenge != state.Session.Challenge {
		return nil, fmt.Errorf("%w: it holds no challenge", refusal.ErrChallengeMissing)
	}
	if !state.Expires.IsZero() && p.now().After(state.Expires) {
		return nil, fmt.Errorf("%w at %s", refusal.ErrChallengeExpired, state.Expires.UTC().Format(time.RFC3339))
	}
	return &state, nil
}
