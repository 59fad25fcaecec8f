package shared

import (
	"crypto/subtle"
	"fmt"

	"github.com/authport/authport/core"
)

// SwapHash is the compare of swapPasswordHash ([core.PasswordHashSwapper])
// on an account as read: when its hash (none reads as "") is oldHash,
// compared in constant time, it returns a copy holding newHash, for the
// caller to write only if the record is still as read; otherwise it
// returns cur and an error matching [core.ErrPasswordHashChanged].
func SwapHash(cur *core.Account, oldHash, newHash string) (*core.Account, error) {
	stored := ""
	if cur.PasswordHash != nil {
		stored = *cur.PasswordHash
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(oldHash)) != 1 {
		return cur, fmt.Errorf("account (%q, %q): read the account again and retry: %w", cur.Provider, cur.ProviderAccountID, core.ErrPasswordHashChanged)
	}
	next := *cur
	next.PasswordHash = &newHash
	return &next, nil
}
