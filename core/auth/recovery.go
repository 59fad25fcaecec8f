package auth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/authport/authport/core"
)

// Recovery codes: ten per set, each 10 characters of Crockford's base32
// (50 random bits from crypto/rand) shown as "xxxxx-xxxxx". The factor's
// Secret is the concatenation of the codes' keyed hashes (HMAC-SHA-256
// with a configured secret of the user id and the code); using one swaps
// the Secret for the set without its hash (compare-and-set, with Step
// counting the uses), so of one code raced on any number of instances one
// use wins. A secret removed from Config.Secrets takes the codes hashed
// with it along: keep old secrets configured (they only verify).

const (
	recoveryCodeCount = 10
	recoveryCodeChars = 10
	recoveryHashSize  = sha256.Size
	recoveryAlphabet  = "0123456789abcdefghjkmnpqrstvwxyz"
)

// newRecoveryCode returns one code, formatted.
func newRecoveryCode() (string, error) {
	var b [recoveryCodeChars]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("second factors: reading a random recovery code: %w", err)
	}
	out := make([]byte, 0, recoveryCodeChars+1)
	for i, c := range b {
		if i == recoveryCodeChars/2 {
			out = append(out, '-')
		}
		out = append(out, recoveryAlphabet[c&31])
	}
	return string(out), nil
}

// normalizeRecoveryCode returns a typed code in its stored form (10
// characters of the alphabet, the look-alikes o, i and l read as 0 and 1,
// case, spaces and dashes ignored), or false.
func normalizeRecoveryCode(s string) (string, bool) {
	if len(s) > 32 {
		return "", false
	}
	out := make([]byte, 0, recoveryCodeChars)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == ' ':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		switch c {
		case 'o':
			c = '0'
		case 'i', 'l':
			c = '1'
		}
		if strings.IndexByte(recoveryAlphabet, c) < 0 {
			return "", false
		}
		out = append(out, c)
	}
	if len(out) != recoveryCodeChars {
		return "", false
	}
	return string(out), true
}

// recoveryHash is what the store keeps of a code of the user.
func recoveryHash(secret, userID, code string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("authport recovery code\x00" + userID + "\x00" + code))
	return m.Sum(nil)
}

// newRecoveryCodes makes the user ten new codes, replacing the old set
// (or creating the first), and returns them.
func (a *Auth) newRecoveryCodes(ctx context.Context, userID string) ([]string, error) {
	codes := make([]string, recoveryCodeCount)
	secret := make([]byte, 0, recoveryCodeCount*recoveryHashSize)
	for i := range codes {
		c, err := newRecoveryCode()
		if err != nil {
			return nil, err
		}
		codes[i] = c
		norm, _ := normalizeRecoveryCode(c)
		secret = append(secret, recoveryHash(a.secrets[0], userID, norm)...)
	}
	factors, err := a.listFactors(ctx, userID)
	if err != nil {
		return nil, err
	}
	now := a.now()
	var old []core.Factor
	for _, f := range factors {
		if f.Type == core.FactorRecoveryCodes {
			old = append(old, f)
		}
	}
	if len(old) == 0 {
		if _, err := a.createFactor(ctx, core.Factor{ID: core.NewUUID(), UserID: userID, Type: core.FactorRecoveryCodes,
			Name: "Recovery codes", Secret: secret, CreatedAt: now}); err != nil {
			return nil, err
		}
		return codes, nil
	}
	// The first set is swapped (whatever a concurrent use did to it),
	// any other deleted.
	first := old[0]
	for range maxSwapRetries {
		next := first
		next.Secret, next.Step, next.LastUsedAt = secret, first.Step+1, first.LastUsedAt
		swapped, err := a.store.SwapFactor(ctx, first, next)
		if errors.Is(err, core.ErrFactorChanged) {
			if first, err = a.findFactor(ctx, userID, first.ID); err != nil {
				return nil, err
			}
			if first.ID != "" {
				continue
			}
			return a.newRecoveryCodes(ctx, userID) // deleted meanwhile
		}
		if err != nil {
			return nil, &AdapterError{Method: core.MethodSwapFactor, Err: err}
		}
		if swapped == nil {
			return a.newRecoveryCodes(ctx, userID)
		}
		for _, f := range old[1:] {
			if _, err := a.deleteFactor(ctx, userID, f.ID); err != nil {
				return nil, err
			}
		}
		return codes, nil
	}
	return nil, fmt.Errorf("second factors: the recovery codes kept changing (%d tries)", maxSwapRetries)
}

// findFactor reads the user's factor with the id; the zero Factor when it
// is gone.
func (a *Auth) findFactor(ctx context.Context, userID, id string) (core.Factor, error) {
	factors, err := a.listFactors(ctx, userID)
	if err != nil {
		return core.Factor{}, err
	}
	if i := slices.IndexFunc(factors, func(f core.Factor) bool { return f.ID == id }); i >= 0 {
		return factors[i], nil
	}
	return core.Factor{}, nil
}

// useRecoveryCode uses one of the user's recovery codes, once.
func (a *Auth) useRecoveryCode(ctx context.Context, userID, code string) error {
	norm, ok := normalizeRecoveryCode(code)
	if !ok {
		return refused("the recovery code has the wrong shape")
	}
	hashes := make([][]byte, len(a.secrets))
	for i, s := range a.secrets {
		hashes[i] = recoveryHash(s, userID, norm)
	}
	return a.spendFactor(ctx, userID, core.FactorRecoveryCodes, "the recovery codes", "the recovery code does not work", "",
		func(f core.Factor) (core.Factor, bool, error) {
			at := -1
			for i := 0; i+recoveryHashSize <= len(f.Secret); i += recoveryHashSize {
				for _, h := range hashes {
					if subtle.ConstantTimeCompare(f.Secret[i:i+recoveryHashSize], h) == 1 {
						at = i
					}
				}
			}
			if at < 0 {
				return core.Factor{}, false, nil
			}
			next := f
			next.Secret = bytes.Clone(f.Secret[:at])
			next.Secret = append(next.Secret, f.Secret[at+recoveryHashSize:]...)
			next.Step, next.LastUsedAt = f.Step+1, a.now()
			return next, true, nil
		})
}
