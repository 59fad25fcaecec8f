package passkey

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/authport/authport/jwt"
)

// usedChallenges remembers the challenges that served a verified ceremony
// until their cookie has expired, so that a challenge serves one ceremony
// even when its cookie is replayed (the cookie is stateless, and synced
// passkeys report no signature counter that would catch the replay). It
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
// ErrChallengeReused. It runs once the ceremony has verified, before
// anything is stored.
func (p *Passkeys) claimChallenge(state *challengeState) error {
	now := p.now()
	// Past the cookie's lifetime and the JWT clock tolerance.
	if !p.used.claim(state.Challenge, now, now.Add(p.timeout+jwt.ClockTolerance+time.Minute)) {
		return ErrChallengeReused
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

// challengeState is the JSON the challenge cookie seals as its "value":
// Auth.js's {challenge, registerData}, plus the action and go-webauthn's
// session data.
type challengeState struct {
	Challenge    string               `json:"challenge"`
	RegisterData *registerData        `json:"registerData,omitempty"`
	Action       string               `json:"action"`
	Provider     string               `json:"provider"`
	Session      webauthn.SessionData `json:"session"`
}

func (p *Passkeys) cookieName(rp *relyingParty) string {
	if rp.secure {
		return "__Secure-authjs.challenge"
	}
	return "authjs.challenge"
}

// setChallenge seals the state into Auth.js's challenge cookie.
func (p *Passkeys) setChallenge(w http.ResponseWriter, r *http.Request, rp *relyingParty, state challengeState) error {
	value, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("passkey: challenge cookie: %w", err)
	}
	name := p.cookieName(rp)
	token, err := p.codec.Encode(name, map[string]any{"value": string(value)}, p.timeout)
	if err != nil {
		return fmt.Errorf("passkey: challenge cookie: %w", err)
	}
	c := &http.Cookie{Name: name, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: rp.secure,
		Expires: p.now().Add(p.timeout).UTC(), MaxAge: int(p.timeout / time.Second)}
	for _, part := range jwt.SetCookies(r, c) {
		http.SetCookie(w, part)
	}
	return nil
}

// useChallenge reads the challenge cookie and clears it on w (Auth.js's
// webauthnChallenge.use).
func (p *Passkeys) useChallenge(w http.ResponseWriter, r *http.Request, rp *relyingParty) (*challengeState, error) {
	name := p.cookieName(rp)
	claims, err := p.codec.DecodeCookie(r, name)
	if _, cerr := jwt.JoinCookies(r, name); cerr == nil {
		for _, part := range jwt.ClearCookies(r, &http.Cookie{Name: name, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: rp.secure}) {
			http.SetCookie(w, part)
		}
	}
	switch {
	case errors.Is(err, jwt.ErrExpiredToken):
		return nil, ErrChallengeExpired
	case errors.Is(err, http.ErrNoCookie):
		return nil, ErrChallengeMissing
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrChallengeMissing, err)
	}
	value, ok := claims["value"].(string)
	var state challengeState
	if !ok || json.Unmarshal([]byte(value), &state) != nil || state.Challenge == "" || state.Challenge != state.Session.Challenge {
		return nil, fmt.Errorf("%w: the cookie holds no challenge", ErrChallengeMissing)
	}
	return &state, nil
}
