package conformance

import (
	"context"
	"errors"

	"github.com/authport/authport/core"
)

// errNotKept is what the wrappers of [withoutExtensions] return from the
// extensions they stand in for: the checked layer must never call them.
var errNotKept = errors.New("conformance: the checked layer called an extension the adapter omits")

// unkeptAdapter is an adapter without the extensions that keep usernames
// and password hashes, for the rules that the checked layer refuses those
// to such an adapter: it forwards the user and account writes to the
// adapter under test, and has no getUserByUsername nor swapPasswordHash.
type unkeptAdapter struct{ a any }

// forward returns the adapter under test as the method interface I.
func forward[I any](a any) (I, error) {
	return core.Require[I](a, "the conformance rules of unkept fields")
}

// CreateUser forwards to the adapter under test.
func (w unkeptAdapter) CreateUser(ctx context.Context, u core.User) (*core.User, error) {
	f, err := forward[core.UserCreator](w.a)
	if err != nil {
		return nil, err
	}
	return f.CreateUser(ctx, u)
}

// UpdateUser forwards to the adapter under test.
func (w unkeptAdapter) UpdateUser(ctx context.Context, up core.UserUpdate) (*core.User, error) {
	f, err := forward[core.UserUpdater](w.a)
	if err != nil {
		return nil, err
	}
	return f.UpdateUser(ctx, up)
}

// LinkAccount forwards to the adapter under test.
func (w unkeptAdapter) LinkAccount(ctx context.Context, acc core.Account) (*core.Account, error) {
	f, err := forward[core.AccountLinker](w.a)
	if err != nil {
		return nil, err
	}
	return f.LinkAccount(ctx, acc)
}

// omittingAdapter has the two extensions' methods but names them in
// OmittedMethods, as a SQL preset whose table has no room for the fields
// does ([core.MethodOmitter]).
type omittingAdapter struct{ unkeptAdapter }

// GetUserByUsername is omitted: it fails.
func (omittingAdapter) GetUserByUsername(context.Context, string) (*core.User, error) {
	return nil, errNotKept
}

// SwapPasswordHash is omitted: it fails.
func (omittingAdapter) SwapPasswordHash(context.Context, core.AccountKey, string, string) (*core.Account, error) {
	return nil, errNotKept
}

// OmittedMethods implements [core.MethodOmitter]: both extensions.
func (omittingAdapter) OmittedMethods() []core.Method {
	return []core.Method{core.MethodGetUserByUsername, core.MethodSwapPasswordHash}
}

// namedAdapter is an adapter with a name for failure messages.
type namedAdapter struct {
	name    string
	adapter any
}

// withoutExtensions returns the adapter a behind the two wrappers that keep
// no usernames and no password hashes: one without the methods, one that
// omits them.
func withoutExtensions(a any) []namedAdapter {
	w := unkeptAdapter{a}
	return []namedAdapter{
		{"an adapter without getUserByUsername and swapPasswordHash", w},
		{"an adapter that omits getUserByUsername and swapPasswordHash", omittingAdapter{w}},
	}
}
