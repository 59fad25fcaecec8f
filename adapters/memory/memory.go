// Package memory is an in-process authport adapter: every record lives in Go
// maps guarded by one mutex. It implements all 19 methods of the adapter
// contract and every extension (usernames, password hashes and second
// factors included), and is safe for concurrent use.
//
// It is meant for tests, examples and single-process tools whose sessions
// may vanish on restart. Records are copied in and out, so a caller that
// changes a record it passed in or got back changes nothing stored.
// Expired sessions and verification tokens are never returned; [Adapter.PurgeExpired]
// frees their memory.
package memory

import (
	"context"
	"crypto/subtle"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/authport/authport/core"
)

// Adapter is an in-memory adapter. Create one with [New]; the zero value is
// not usable.
type Adapter struct {
	config

	mu             sync.Mutex
	users          map[string]core.User
	userByEmail    userIndex
	userByUsername userIndex
	accounts       table[core.AccountKey, core.Account]
	sessions       table[string, core.Session] // by session token
	tokens         map[core.VerificationTokenKey]core.VerificationToken
	authenticators table[string, core.Authenticator] // by credential id
	factors        table[string, core.Factor]        // by factor id
}

var (
	_ core.Adapter                      = (*Adapter)(nil)
	_ core.ExpiredPurger                = (*Adapter)(nil)
	_ core.AuthenticatorCounterAdvancer = (*Adapter)(nil)
	_ core.AccountsByUserLister         = (*Adapter)(nil)
	_ core.AccountUpdater               = (*Adapter)(nil)
	_ core.SessionExtender              = (*Adapter)(nil)
	_ core.SessionsByUserLister         = (*Adapter)(nil)
	_ core.SessionsByUserDeleter        = (*Adapter)(nil)
	_ core.SessionMetadataKeeper        = (*Adapter)(nil)
	_ core.UserByUsernameGetter         = (*Adapter)(nil)
	_ core.PasswordHashSwapper          = (*Adapter)(nil)
	_ core.FactorCreator                = (*Adapter)(nil)
	_ core.FactorsByUserLister          = (*Adapter)(nil)
	_ core.FactorSwapper                = (*Adapter)(nil)
	_ core.FactorDeleter                = (*Adapter)(nil)
)

// config is what the options set.
type config struct {
	now func() time.Time
}

// Option configures an [Adapter].
type Option func(*config)

// WithClock makes the adapter read the current time from now instead of
// [time.Now]; it decides which sessions and tokens have expired.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// New returns an empty adapter.
func New(opts ...Option) *Adapter {
	a := &Adapter{
		config:         config{now: time.Now},
		users:          make(map[string]core.User),
		userByEmail:    newUserIndex("e-mail", func(u *core.User) string { return u.Email }),
		userByUsername: newUserIndex("username", func(u *core.User) string { return u.Username }),
		accounts:       newTable[core.AccountKey](func(acc *core.Account) string { return acc.UserID }),
		sessions:       newTable[string](func(s *core.Session) string { return s.UserID }),
		tokens:         make(map[core.VerificationTokenKey]core.VerificationToken),
		authenticators: newTable[string](func(au *core.Authenticator) string { return au.UserID }),
		factors:        newTable[string](func(f *core.Factor) string { return f.UserID }),
	}
	for _, o := range opts {
		o(&a.config)
	}
	return a
}

// lock takes the mutex and returns its unlock.
func (a *Adapter) lock() (unlock func()) {
	a.mu.Lock()
	return a.mu.Unlock
}

func ptr[T any](v T) *T { return &v }

// copyOf returns a copy, made by cp, of the record of m under key, or nil
// when there is none.
func copyOf[K comparable, R any](m map[K]R, key K, cp func(R) R) *R {
	r, ok := m[key]
	if !ok {
		return nil
	}
	return ptr(cp(r))
}

// take removes the record of m under key and returns it, copied by cp
// when cp is not nil, or nil when there was none.
func take[K comparable, R any](m map[K]R, key K, cp func(R) R) *R {
	r, ok := m[key]
	if !ok {
		return nil
	}
	delete(m, key)
	if cp != nil {
		r = cp(r)
	}
	return &r
}

// userIndex maps one unique key of users (the e-mail address, the
// username) to the id of the user that has it. "" is no key: a user without
// one has no entry, so any number of users can be without one.
type userIndex struct {
	what string                  // the key's name, for errors
	key  func(*core.User) string // a user's key, "" for none
	ids  map[string]string       // key → user id
}

// newUserIndex returns an empty index of the key that key reads, named what.
func newUserIndex(what string, key func(*core.User) string) userIndex {
	return userIndex{what: what, key: key, ids: make(map[string]string)}
}

// find returns the id of the user whose key is k; never one for "".
func (x userIndex) find(k string) (string, bool) {
	if k == "" {
		return "", false
	}
	id, ok := x.ids[k]
	return id, ok
}

// conflict returns an error matching [core.ErrAlreadyExists] when another
// user than u has u's key.
func (x userIndex) conflict(u *core.User) error {
	k := x.key(u)
	if id, ok := x.find(k); ok && id != u.ID {
		return fmt.Errorf("%s %q: %w", x.what, k, core.ErrAlreadyExists)
	}
	return nil
}

// add indexes u's key, if it has one.
func (x userIndex) add(u *core.User) {
	if k := x.key(u); k != "" {
		x.ids[k] = u.ID
	}
}

// remove drops u's key from the index, if it is indexed to u.
func (x userIndex) remove(u *core.User) {
	if id, ok := x.find(x.key(u)); ok && id == u.ID {
		delete(x.ids, x.key(u))
	}
}

// userIndexes returns the indexes of the users' unique keys.
func (a *Adapter) userIndexes() [2]userIndex { return [2]userIndex{a.userByEmail, a.userByUsername} }

// putUserLocked stores u in place of old (nil for a new user), moving its
// index entries, after checking that no other user has one of the keys u
// gains: on a conflict it changes nothing and returns an error matching
// [core.ErrAlreadyExists]. A key u keeps is not checked again.
func (a *Adapter) putUserLocked(old, u *core.User) error {
	xs := a.userIndexes()
	for _, x := range xs {
		if old != nil && x.key(old) == x.key(u) {
			continue
		}
		if err := x.conflict(u); err != nil {
			return err
		}
	}
	for _, x := range xs {
		if old != nil {
			x.remove(old)
		}
		x.add(u)
	}
	a.users[u.ID] = *u
	return nil
}

// removeUserLocked deletes the user u and its index entries.
func (a *Adapter) removeUserLocked(u *core.User) {
	for _, x := range a.userIndexes() {
		x.remove(u)
	}
	delete(a.users, u.ID)
}

// table holds the records of one kind that belong to a user (accounts,
// sessions, authenticators) by key, and indexes their keys by user id, so
// that a user's records are found, listed and deleted in time proportional
// to their number rather than to the store's. Reads may use rows directly;
// every write goes through put, remove, take or removeUser, which keep
// byUser in step with rows.
type table[K comparable, R any] struct {
	rows   map[K]R
	byUser map[string]map[K]struct{} // user id → keys of its rows; no set is empty
	user   func(*R) string           // a record's user id
}

// newTable returns an empty table whose records' user ids are read by user.
func newTable[K comparable, R any](user func(*R) string) table[K, R] {
	return table[K, R]{rows: make(map[K]R), byUser: make(map[string]map[K]struct{}), user: user}
}

// put stores r under key, replacing any record there; when the replaced
// record belonged to another user, the key moves to r's user in the index.
func (t *table[K, R]) put(key K, r R) {
	u := t.user(&r)
	old, replaced := t.rows[key]
	t.rows[key] = r
	if replaced {
		was := t.user(&old)
		if was == u {
			return
		}
		t.unindex(was, key)
	}
	keys := t.byUser[u]
	if keys == nil {
		keys = make(map[K]struct{})
		t.byUser[u] = keys
	}
	keys[key] = struct{}{}
}

// unindex removes key from the index of userID's records.
func (t *table[K, R]) unindex(userID string, key K) {
	keys := t.byUser[userID]
	delete(keys, key)
	if len(keys) == 0 {
		delete(t.byUser, userID)
	}
}

// remove deletes the record under key, if there is one.
func (t *table[K, R]) remove(key K) {
	if r, ok := t.rows[key]; ok {
		delete(t.rows, key)
		t.unindex(t.user(&r), key)
	}
}

// take removes the record under key and returns it, copied by cp when cp
// is not nil, or nil when there was none.
func (t *table[K, R]) take(key K, cp func(R) R) *R {
	r := take(t.rows, key, cp)
	if r != nil {
		t.unindex(t.user(r), key)
	}
	return r
}

// removeUser deletes every record of the user userID.
func (t *table[K, R]) removeUser(userID string) {
	for key := range t.byUser[userID] {
		delete(t.rows, key)
	}
	delete(t.byUser, userID)
}

// ofUser returns copies, made by cp, of the records of the user userID, in
// the order of cmp; an empty, non-nil list when there are none.
func (t *table[K, R]) ofUser(userID string, cp func(R) R, cmp func(x, y R) int) []R {
	keys := t.byUser[userID]
	list := make([]R, 0, len(keys))
	for key := range keys {
		list = append(list, cp(t.rows[key]))
	}
	slices.SortFunc(list, cmp)
	return list
}

// CreateUser implements [core.UserCreator].
func (a *Adapter) CreateUser(ctx context.Context, user core.User) (*core.User, error) {
	defer a.lock()()
	if _, ok := a.users[user.ID]; ok {
		return nil, fmt.Errorf("user id %q: %w", user.ID, core.ErrAlreadyExists)
	}
	u := user.Normalize()
	if err := a.putUserLocked(nil, &u); err != nil {
		return nil, err
	}
	return ptr(u.Clone()), nil
}

// GetUser implements [core.UserGetter].
func (a *Adapter) GetUser(ctx context.Context, id string) (*core.User, error) {
	defer a.lock()()
	return a.userLocked(id), nil
}

func (a *Adapter) userLocked(id string) *core.User {
	return copyOf(a.users, id, core.User.Clone)
}

// GetUserByEmail implements [core.UserByEmailGetter]. It finds nobody by
// "".
func (a *Adapter) GetUserByEmail(ctx context.Context, email string) (*core.User, error) {
	return a.userByKey(a.userByEmail, email), nil
}

// GetUserByUsername implements [core.UserByUsernameGetter]: the username is
// compared exactly. It finds nobody by "".
func (a *Adapter) GetUserByUsername(ctx context.Context, username string) (*core.User, error) {
	return a.userByKey(a.userByUsername, username), nil
}

// userByKey returns a copy of the user whose key in the index x is k, or
// nil when there is none.
func (a *Adapter) userByKey(x userIndex, k string) *core.User {
	defer a.lock()()
	id, ok := x.find(k)
	if !ok {
		return nil
	}
	return a.userLocked(id)
}

// GetUserByAccount implements [core.UserByAccountGetter].
func (a *Adapter) GetUserByAccount(ctx context.Context, key core.AccountKey) (*core.User, error) {
	defer a.lock()()
	acc, ok := a.accounts.rows[key]
	if !ok {
		return nil, nil
	}
	return a.userLocked(acc.UserID), nil
}

// UpdateUser implements [core.UserUpdater].
func (a *Adapter) UpdateUser(ctx context.Context, update core.UserUpdate) (*core.User, error) {
	defer a.lock()()
	old, ok := a.users[update.ID]
	if !ok {
		return nil, fmt.Errorf("user %q: %w", update.ID, core.ErrNotFound)
	}
	u := update.Apply(old)
	if err := a.putUserLocked(&old, &u); err != nil {
		return nil, err
	}
	return ptr(u.Clone()), nil
}

// DeleteUser implements [core.UserDeleter]. It removes the user's accounts,
// sessions, authenticators and factors with it.
func (a *Adapter) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	defer a.lock()()
	u, ok := a.users[id]
	if !ok {
		return nil, nil
	}
	a.accounts.removeUser(id)
	a.sessions.removeUser(id)
	a.authenticators.removeUser(id)
	a.factors.removeUser(id)
	a.removeUserLocked(&u)
	return &u, nil
}

// LinkAccount implements [core.AccountLinker].
func (a *Adapter) LinkAccount(ctx context.Context, account core.Account) (*core.Account, error) {
	defer a.lock()()
	if _, ok := a.users[account.UserID]; !ok {
		return nil, fmt.Errorf("user %q: %w", account.UserID, core.ErrNotFound)
	}
	if _, ok := a.accounts.rows[account.Key()]; ok {
		return nil, fmt.Errorf("account %q/%q: %w", account.Provider, account.ProviderAccountID, core.ErrAlreadyExists)
	}
	acc := account.Normalize()
	a.accounts.put(acc.Key(), acc)
	return ptr(acc.Clone()), nil
}

// UnlinkAccount implements [core.AccountUnlinker].
func (a *Adapter) UnlinkAccount(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	defer a.lock()()
	return a.accounts.take(key, core.Account.Normalize), nil
}

// GetAccount implements [core.AccountGetter].
func (a *Adapter) GetAccount(ctx context.Context, providerAccountID, provider string) (*core.Account, error) {
	defer a.lock()()
	// Normalize, not only copy: a record added by Import may hold a
	// token_type written by another program ("Bearer").
	return copyOf(a.accounts.rows, core.AccountKey{Provider: provider, ProviderAccountID: providerAccountID}, core.Account.Normalize), nil
}

// ListAccountsByUserID implements [core.AccountsByUserLister].
func (a *Adapter) ListAccountsByUserID(ctx context.Context, userID string) ([]core.Account, error) {
	defer a.lock()()
	return a.accounts.ofUser(userID, core.Account.Normalize, core.CompareAccounts), nil
}

// UpdateAccount implements [core.AccountUpdater].
func (a *Adapter) UpdateAccount(ctx context.Context, update core.AccountUpdate) (*core.Account, error) {
	defer a.lock()()
	old, ok := a.accounts.rows[update.Key()]
	if !ok {
		return nil, nil
	}
	acc := update.Apply(old)
	a.accounts.put(acc.Key(), acc)
	return ptr(acc.Clone()), nil
}

// SwapPasswordHash implements [core.PasswordHashSwapper]: under the
// adapter's lock it compares the stored hash with oldHash in constant time
// and, when they are equal, stores newHash.
func (a *Adapter) SwapPasswordHash(ctx context.Context, key core.AccountKey, oldHash, newHash string) (*core.Account, error) {
	defer a.lock()()
	acc, ok := a.accounts.rows[key]
	if !ok {
		return nil, nil
	}
	var stored string
	if acc.PasswordHash != nil {
		stored = *acc.PasswordHash
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(oldHash)) != 1 {
		return ptr(acc.Normalize()), fmt.Errorf("account %q/%q: %w", key.Provider, key.ProviderAccountID, core.ErrPasswordHashChanged)
	}
	acc.PasswordHash = &newHash // a new pointer: the stored record's is not written through
	a.accounts.put(key, acc)
	return ptr(acc.Normalize()), nil
}

// CreateSession implements [core.SessionCreator].
func (a *Adapter) CreateSession(ctx context.Context, session core.Session) (*core.Session, error) {
	defer a.lock()()
	if _, ok := a.users[session.UserID]; !ok {
		return nil, fmt.Errorf("user %q: %w", session.UserID, core.ErrNotFound)
	}
	if _, ok := a.sessions.rows[session.SessionToken]; ok {
		return nil, fmt.Errorf("session token: %w", core.ErrAlreadyExists)
	}
	s := session.Normalize()
	a.sessions.put(s.SessionToken, s)
	return &s, nil
}

// GetSessionAndUser implements [core.SessionAndUserGetter]. An expired
// session is deleted and reported as not found.
func (a *Adapter) GetSessionAndUser(ctx context.Context, sessionToken string) (*core.SessionAndUser, error) {
	// The hot path of every request: it locks without lock's closure and
	// returns the result and the copies of the user's nullable fields in
	// one allocation (sessionAndUserBox), not four.
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions.rows[sessionToken]
	if !ok {
		return nil, nil
	}
	if s.Expired(a.now()) {
		a.sessions.remove(sessionToken)
		return nil, nil
	}
	u, ok := a.users[s.UserID]
	if !ok {
		return nil, nil
	}
	box := &sessionAndUserBox{su: core.SessionAndUser{Session: s, User: u}}
	if u.EmailVerified != nil {
		box.verified = *u.EmailVerified
		box.su.User.EmailVerified = &box.verified
	}
	if u.Name != nil {
		box.name = *u.Name
		box.su.User.Name = &box.name
	}
	if u.Image != nil {
		box.image = *u.Image
		box.su.User.Image = &box.image
	}
	if u.Data != nil {
		box.su.User.Data = core.MergeData(u.Data, nil)
	}
	return &box.su, nil
}

// sessionAndUserBox holds a SessionAndUser and the values its user's
// pointer fields point to, so that GetSessionAndUser returns a copy that
// shares no memory with the store in a single allocation.
type sessionAndUserBox struct {
	su          core.SessionAndUser
	verified    time.Time
	name, image string
}

// UpdateSession implements [core.SessionUpdater].
func (a *Adapter) UpdateSession(ctx context.Context, update core.SessionUpdate) (*core.Session, error) {
	defer a.lock()()
	old, ok := a.sessions.rows[update.SessionToken]
	if !ok {
		return nil, nil
	}
	s := update.Apply(old)
	if _, ok := a.users[s.UserID]; !ok {
		return nil, fmt.Errorf("user %q: %w", s.UserID, core.ErrNotFound)
	}
	a.sessions.put(s.SessionToken, s) // the update may move it to another user
	return &s, nil
}

// ExtendSession implements [core.SessionExtender].
func (a *Adapter) ExtendSession(ctx context.Context, sessionToken string, from, expires, seen time.Time) (*core.Session, bool, error) {
	defer a.lock()()
	s, ok := a.sessions.rows[sessionToken]
	if !ok {
		return nil, false, nil
	}
	if s.Expires.After(from) {
		return &s, false, nil
	}
	s.Expires, s.UpdatedAt = expires, seen
	a.sessions.put(sessionToken, s)
	return &s, true, nil
}

// KeepsSessionMetadata implements [core.SessionMetadataKeeper]: sessions
// are kept whole.
func (a *Adapter) KeepsSessionMetadata() bool { return true }

// ListSessionsByUserID implements [core.SessionsByUserLister]. Expired
// sessions are deleted on the way, not listed.
func (a *Adapter) ListSessionsByUserID(ctx context.Context, userID string) ([]core.Session, error) {
	defer a.lock()()
	now := a.now()
	for token := range a.sessions.byUser[userID] {
		if s := a.sessions.rows[token]; s.Expired(now) {
			a.sessions.remove(token)
		}
	}
	return a.sessions.ofUser(userID, core.Session.Normalize, core.CompareSessions), nil
}

// DeleteSessionsByUserID implements [core.SessionsByUserDeleter], under the
// adapter's one lock.
func (a *Adapter) DeleteSessionsByUserID(ctx context.Context, userID, except string) (int, error) {
	defer a.lock()()
	now, n := a.now(), 0
	for token := range a.sessions.byUser[userID] {
		if token == except {
			continue
		}
		if s := a.sessions.rows[token]; !s.Expired(now) {
			n++
		}
		a.sessions.remove(token)
	}
	return n, nil
}

// DeleteSession implements [core.SessionDeleter].
func (a *Adapter) DeleteSession(ctx context.Context, sessionToken string) (*core.Session, error) {
	defer a.lock()()
	return a.sessions.take(sessionToken, nil), nil
}

// CreateVerificationToken implements [core.VerificationTokenCreator].
func (a *Adapter) CreateVerificationToken(ctx context.Context, token core.VerificationToken) (*core.VerificationToken, error) {
	defer a.lock()()
	if _, ok := a.tokens[token.Key()]; ok {
		return nil, fmt.Errorf("%w", core.ErrAlreadyExists)
	}
	v := token.Normalize()
	a.tokens[v.Key()] = v
	return &v, nil
}

// UseVerificationToken implements [core.VerificationTokenUser]. An expired
// token is deleted and reported as not found.
func (a *Adapter) UseVerificationToken(ctx context.Context, key core.VerificationTokenKey) (*core.VerificationToken, error) {
	defer a.lock()()
	v := take(a.tokens, key, nil)
	if v == nil || v.Expired(a.now()) {
		return nil, nil
	}
	return v, nil
}

// CreateAuthenticator implements [core.AuthenticatorCreator].
func (a *Adapter) CreateAuthenticator(ctx context.Context, authenticator core.Authenticator) (*core.Authenticator, error) {
	defer a.lock()()
	if _, ok := a.users[authenticator.UserID]; !ok {
		return nil, fmt.Errorf("user %q: %w", authenticator.UserID, core.ErrNotFound)
	}
	if _, ok := a.authenticators.rows[authenticator.CredentialID]; ok {
		return nil, fmt.Errorf("credential id %q: %w", authenticator.CredentialID, core.ErrAlreadyExists)
	}
	au := authenticator.Clone()
	a.authenticators.put(au.CredentialID, au)
	return ptr(au.Clone()), nil
}

// GetAuthenticator implements [core.AuthenticatorGetter].
func (a *Adapter) GetAuthenticator(ctx context.Context, credentialID string) (*core.Authenticator, error) {
	defer a.lock()()
	return copyOf(a.authenticators.rows, credentialID, core.Authenticator.Clone), nil
}

// ListAuthenticatorsByUserID implements [core.AuthenticatorsByUserLister].
func (a *Adapter) ListAuthenticatorsByUserID(ctx context.Context, userID string) ([]core.Authenticator, error) {
	defer a.lock()()
	return a.authenticators.ofUser(userID, core.Authenticator.Clone, core.CompareAuthenticators), nil
}

// UpdateAuthenticatorCounter implements [core.AuthenticatorCounterUpdater].
func (a *Adapter) UpdateAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	return a.setCounter(credentialID, newCounter, false)
}

// AdvanceAuthenticatorCounter implements
// [core.AuthenticatorCounterAdvancer]: under the adapter's lock it sets the
// counter only if newCounter is above the stored one (both 0 passes and
// changes nothing), else it fails with [core.ErrCounterNotIncreased].
func (a *Adapter) AdvanceAuthenticatorCounter(ctx context.Context, credentialID string, newCounter int64) (*core.Authenticator, error) {
	return a.setCounter(credentialID, newCounter, true)
}

// setCounter sets the authenticator's counter under the adapter's lock;
// with increaseOnly only if newCounter is above the stored one
// (both 0 passes), else it fails with [core.ErrCounterNotIncreased].
func (a *Adapter) setCounter(credentialID string, newCounter int64, increaseOnly bool) (*core.Authenticator, error) {
	defer a.lock()()
	au, ok := a.authenticators.rows[credentialID]
	if !ok {
		return nil, fmt.Errorf("credential id %q: %w", credentialID, core.ErrNotFound)
	}
	if increaseOnly && !core.CounterAdvances(au.Counter, newCounter) {
		return nil, fmt.Errorf("stored %d, reported %d: %w", au.Counter, newCounter, core.ErrCounterNotIncreased)
	}
	au.Counter = newCounter
	a.authenticators.put(credentialID, au)
	return ptr(au.Clone()), nil
}

// CreateFactor implements [core.FactorCreator].
func (a *Adapter) CreateFactor(ctx context.Context, factor core.Factor) (*core.Factor, error) {
	defer a.lock()()
	if _, ok := a.users[factor.UserID]; !ok {
		return nil, fmt.Errorf("user %q: %w", factor.UserID, core.ErrNotFound)
	}
	if _, ok := a.factors.rows[factor.ID]; ok {
		return nil, fmt.Errorf("factor id %q: %w", factor.ID, core.ErrAlreadyExists)
	}
	f := factor.Normalize() // a copy: the caller's secret is not kept
	a.factors.put(f.ID, f)
	return ptr(f.Clone()), nil
}

// ListFactorsByUserID implements [core.FactorsByUserLister].
func (a *Adapter) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	defer a.lock()()
	return a.factors.ofUser(userID, core.Factor.Normalize, core.CompareFactors), nil
}

// SwapFactor implements [core.FactorSwapper]: under the adapter's lock it
// compares the stored secret with old's in constant time, and the stored
// step with old's, and when both are equal sets the name, secret, step and
// time of last use to next's.
func (a *Adapter) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	defer a.lock()()
	f, ok := a.factorLocked(old.UserID, old.ID)
	if !ok {
		return nil, nil
	}
	same := subtle.ConstantTimeCompare(f.Secret, old.Secret) == 1
	if !same || f.Step != old.Step {
		return ptr(f.Normalize()), fmt.Errorf("factor %q: %w", f.ID, core.ErrFactorChanged)
	}
	n := next.Normalize() // a copy: the caller's secret is not kept
	f.Name, f.Secret, f.Step, f.LastUsedAt = n.Name, n.Secret, n.Step, n.LastUsedAt
	a.factors.put(f.ID, f)
	return ptr(f.Normalize()), nil
}

// DeleteFactor implements [core.FactorDeleter].
func (a *Adapter) DeleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	defer a.lock()()
	if _, ok := a.factorLocked(userID, id); !ok {
		return nil, nil
	}
	return a.factors.take(id, core.Factor.Normalize), nil
}

// factorLocked returns the stored factor with the id when it is the
// user's.
func (a *Adapter) factorLocked(userID, id string) (core.Factor, bool) {
	f, ok := a.factors.rows[id]
	if !ok || f.UserID != userID {
		return core.Factor{}, false
	}
	return f, true
}

// PurgeExpired implements [core.ExpiredPurger]: it deletes every session and
// verification token that has expired.
func (a *Adapter) PurgeExpired(ctx context.Context) (core.PurgeResult, error) {
	defer a.lock()()
	now := a.now()
	var r core.PurgeResult
	for k, s := range a.sessions.rows {
		if s.Expired(now) {
			a.sessions.remove(k)
			r.Sessions++
		}
	}
	for k, v := range a.tokens {
		if v.Expired(now) {
			delete(a.tokens, k)
			r.VerificationTokens++
		}
	}
	return r, nil
}

// Snapshot is a copy of everything an [Adapter] stores, including expired
// sessions and tokens not yet purged. Slices are in no particular order.
type Snapshot struct {
	Users              []core.User
	Accounts           []core.Account
	Sessions           []core.Session
	VerificationTokens []core.VerificationToken
	Authenticators     []core.Authenticator
	Factors            []core.Factor
}

// Import adds the records of s as they are, without validating or
// normalizing them, as another program sharing the data might have written
// them (a token_type of "Bearer", say); reads normalize what they return.
// It is for tests and for loading an export. Records whose key is already
// stored replace the stored ones; nothing checks that a record's user
// exists.
func (a *Adapter) Import(ctx context.Context, s Snapshot) error {
	defer a.lock()()
	for _, u := range s.Users {
		if old, ok := a.users[u.ID]; ok {
			a.removeUserLocked(&old)
		}
		u = u.Clone()
		for _, x := range a.userIndexes() {
			x.add(&u) // taken from another user when it has the key
		}
		a.users[u.ID] = u
	}
	for _, acc := range s.Accounts {
		a.accounts.put(acc.Key(), acc.Clone())
	}
	for _, se := range s.Sessions {
		a.sessions.put(se.SessionToken, se)
	}
	for _, v := range s.VerificationTokens {
		a.tokens[v.Key()] = v
	}
	for _, au := range s.Authenticators {
		a.authenticators.put(au.CredentialID, au.Clone())
	}
	for _, f := range s.Factors {
		a.factors.put(f.ID, f.Clone())
	}
	return nil
}

// Snapshot returns a deep copy of everything stored, for tests, debugging
// and export.
func (a *Adapter) Snapshot() Snapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	var s Snapshot
	for _, u := range a.users {
		s.Users = append(s.Users, u.Clone())
	}
	for _, acc := range a.accounts.rows {
		s.Accounts = append(s.Accounts, acc.Clone())
	}
	for _, se := range a.sessions.rows {
		s.Sessions = append(s.Sessions, se)
	}
	for _, v := range a.tokens {
		s.VerificationTokens = append(s.VerificationTokens, v)
	}
	for _, au := range a.authenticators.rows {
		s.Authenticators = append(s.Authenticators, au.Clone())
	}
	for _, f := range a.factors.rows {
		s.Factors = append(s.Factors, f.Clone())
	}
	return s
}
