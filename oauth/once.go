package oauth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/authport/authport/core"
)

// callbackScope is the kind of single-use record a callback's check values
// make (see [auth.Edge.UseOnce]).
const callbackScope = "oauth-callback"

// useOnce makes the check values of a sign-in (PKCE verifier, state,
// nonce: random for each Begin) single-use on the server, so that a
// captured callback replayed with the victim's check cookies is refused
// even by a provider that accepts a code twice. The record goes through
// the adapter's createVerificationToken, shared by every instance; an
// adapter without it gets an in-process record, which holds within this
// Flow only. A provider with no checks (checks: none) has nothing to
// record, as in Auth.js.
func (f *Flow) useOnce(ctx context.Context, providerID, verifier, state, nonce string) error {
	if verifier == "" && state == "" && nonce == "" {
		return nil
	}
	key := providerID + "\x00" + verifier + "\x00" + state + "\x00" + nonce
	// The cookies live CheckMaxAge; the sealed value is accepted up to the
	// JWT clock tolerance longer.
	expires := f.now().Add(CheckMaxAge + time.Minute)
	err := f.auth.Edge().UseOnce(ctx, callbackScope, key, expires)
	if errors.Is(err, core.ErrMissingAdapterMethod) {
		err = f.used.use(key, expires, f.now())
	}
	if errors.Is(err, core.ErrAlreadyExists) {
		return fmt.Errorf("%w: provider %q: this callback was already used; start signing in again: %w", errCallbackReplayed, providerID, err)
	}
	return err
}

// maxUsedChecks bounds the in-process record: at most this many sign-ins
// within CheckMaxAge (about 110 a second).
const maxUsedChecks = 100_000

// usedChecks is the in-process record of used check values, for adapters
// without createVerificationToken. Its zero value is ready to use.
type usedChecks struct {
	mu   sync.Mutex
	seen map[string]time.Time // key -> when the record may be forgotten
}

func (u *usedChecks) use(key string, expires, now time.Time) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.seen == nil {
		u.seen = map[string]time.Time{}
	}
	if until, ok := u.seen[key]; ok && now.Before(until) {
		return core.ErrAlreadyExists
	}
	if len(u.seen) >= maxUsedChecks {
		for k, until := range u.seen {
			if !now.Before(until) {
				delete(u.seen, k)
			}
		}
		if len(u.seen) >= maxUsedChecks {
			// Refuse rather than forget a record a replay could reuse.
			return fmt.Errorf("oauth: too many sign-ins under way (%d within %v) for the in-process record of used callbacks; give the auth adapter createVerificationToken to keep these records in the store", maxUsedChecks, CheckMaxAge)
		}
	}
	u.seen[key] = expires
	return nil
}
