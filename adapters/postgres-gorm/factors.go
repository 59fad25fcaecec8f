package gormadapter

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/authport/authport/core"
)

var (
	_ core.FactorCreator       = (*Adapter)(nil)
	_ core.FactorsByUserLister = (*Adapter)(nil)
	_ core.FactorSwapper       = (*Adapter)(nil)
	_ core.FactorDeleter       = (*Adapter)(nil)
)

// CreateFactor implements [core.FactorCreator] with one INSERT. An unknown
// user is reported by the foreign key, as [core.ErrNotFound] (with
// [WithoutForeignKeys]: checked first, in the INSERT's transaction); an id
// already stored, for any user, by the primary key, as
// [core.ErrAlreadyExists]. The secret is stored as bytes (BYTEA, BLOB), an
// empty one as zero bytes.
func (a *Adapter) CreateFactor(ctx context.Context, factor core.Factor) (*core.Factor, error) {
	const m = core.MethodCreateFactor
	return created(a, a.enterFactors, factor.Normalize(), func(f *core.Factor) error {
		if err := f.Validate(); err != nil {
			return err
		}
		if err := checkFactorTime(m, "createdAt", f.CreatedAt); err != nil {
			return err
		}
		if err := checkFactorTime(m, "lastUsedAt", f.LastUsedAt); err != nil {
			return err
		}
		args := append([]any{f.ID, f.UserID, string(f.Type), f.Name, secretArg(f.Secret), f.Step,
			a.d.timeArg(f.CreatedAt), a.optionalTimeArg(f.LastUsedAt)}, a.stampArgs(TableFactors, true)...)
		return a.insertForUser(ctx, f.UserID, a.qs().createFactor, args...)
	})
}

// ListFactorsByUserID implements [core.FactorsByUserLister] with one
// SELECT on the userId index. The result is ordered by id byte for byte,
// whatever the column's collation; an unknown user gives an empty list.
func (a *Adapter) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	return guard(a, a.enterFactors, func() ([]core.Factor, error) {
		return list(ctx, a, a.qs().listFactors, []any{userID}, func(rows *sql.Rows) (core.Factor, error) {
			var r factorRow
			err := rows.Scan(r.dest()...)
			return r.factor(), err
		}, core.CompareFactors)
	})
}

// SwapFactor implements [core.FactorSwapper] with one conditional UPDATE:
// UPDATE factors SET name, secret, step, lastUsedAt WHERE userId = … AND
// id = … AND secret = … AND step = …, … RETURNING on PostgreSQL and
// SQLite; on MySQL and MariaDB the UPDATE and a SELECT run in one
// transaction. The database applies the condition and the change
// atomically (the row's lock is held from the one to the other), so that
// of concurrent swaps from the same secret and step, across any number of
// adapters on the database, one changes the row and the others find the
// condition false.
//
// When the UPDATE changes no row, the factor is read: none (or another
// user's) is nil, nil; a stored secret or step other than old's is that
// factor and an error matching [core.ErrFactorChanged]. A stored secret
// and step equal to old's mean the factor was created, or set back,
// between the two statements: the UPDATE runs again (a few times at most),
// so that neither answer reports a state the factor was not in. (On MySQL
// and MariaDB, which count only the rows a statement changed, a swap to
// the values already stored is reported as done: it is.)
func (a *Adapter) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	const m = core.MethodSwapFactor
	return guard(a, a.enterFactors, func() (*core.Factor, error) {
		old, next = old.Normalize(), next.Normalize()
		if err := checkNext(m, &next); err != nil {
			return nil, err
		}
		q := a.qs()
		args := append([]any{next.Name, secretArg(next.Secret), next.Step, a.optionalTimeArg(next.LastUsedAt)},
			a.stampArgs(TableFactors, false)...)
		args = append(args, old.UserID, old.ID, secretArg(old.Secret), old.Step)
		key := []any{old.UserID, old.ID}
		for range swapAttempts {
			var r factorRow
			updated, found, err := a.updateIf(ctx, q.swapFactor, q.getFactor, args, key, r.dest())
			if keyUnusable(err) {
				return nil, nil
			}
			if err != nil {
				return nil, a.wrap(err)
			}
			if !found {
				return nil, nil
			}
			f := r.factor()
			if updated {
				return &f, nil
			}
			if !sameUse(f, old) {
				return &f, fmt.Errorf("factor %q of user %q: %w", old.ID, old.UserID, core.ErrFactorChanged)
			}
			if sameUse(f, next) && f.Name == next.Name && f.LastUsedAt.Equal(next.LastUsedAt) {
				return &f, nil // MySQL's count of a row left as it was
			}
		}
		return nil, fmt.Errorf("factor %q of user %q: its secret and step kept changing back to the ones expected while it was swapped; try again", old.ID, old.UserID)
	})
}

// DeleteFactor implements [core.FactorDeleter] with one DELETE …
// RETURNING keyed by the user and the id (a SELECT … FOR UPDATE and a
// DELETE in one transaction where the dialect lacks it): another user's
// factor is left in place and reported as none.
func (a *Adapter) DeleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	return guard(a, a.enterFactors, func() (*core.Factor, error) {
		var r factorRow
		if found, err := a.deleted(a.deleteReturning(ctx, a.qs().deleteFactor, r.dest(), userID, id)); !found {
			return nil, err
		}
		f := r.factor()
		return &f, nil
	})
}

// sameUse reports whether f's secret and step are x's: what swapFactor
// compares.
func sameUse(f, x core.Factor) bool {
	return f.Step == x.Step && bytes.Equal(f.Secret, x.Secret)
}

// checkNext returns an [*core.InputError] for the fields of a swap's next
// factor that cannot be stored.
func checkNext(m core.Method, next *core.Factor) error {
	var field, reason string
	switch {
	case len(next.Name) > core.MaxFactorName:
		field, reason = "name", "must be at most 256 bytes"
	case len(next.Secret) > core.MaxFactorSecret:
		field, reason = "secret", "must be at most 4096 bytes"
	case next.Step < 0:
		field, reason = "step", "must not be negative"
	default:
		return checkFactorTime(m, "lastUsedAt", next.LastUsedAt)
	}
	return &core.InputError{Method: string(m), Field: field, Reason: reason}
}

// checkFactorTime refuses a factor's time outside the years the databases
// store (see checkTime); zero is none.
func checkFactorTime(m core.Method, field string, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	return checkTime(m, field, &t)
}

// secretArg is the bind value of a factor's secret: its bytes, and zero
// bytes (not NULL: the column is NOT NULL, and NULL would equal nothing in
// swapFactor's condition) for none.
func secretArg(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// optionalTimeArg is the bind value of a time whose zero value is none:
// NULL for zero.
func (a *Adapter) optionalTimeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return a.d.timeArg(t)
}

// enterFactors is enter for the factor methods, which fail when the
// factors table is omitted.
func (a *Adapter) enterFactors() error {
	if err := a.enter(); err != nil {
		return err
	}
	if a.names.Factors == Omit {
		a.leave()
		return errNoFactors()
	}
	return nil
}

// errNoFactors is what the factor methods return when the factors table is
// omitted (Names.Factors is Omit, as in the Auth.js presets).
func errNoFactors() error {
	return fmt.Errorf("the factors table is omitted (Names.Factors is gormadapter.Omit; name one with WithFactorsTable): %w: %w",
		core.ErrMissingAdapterMethod, errors.ErrUnsupported)
}

// factorRow scans the factor columns in the order of factorColumns.
type factorRow struct {
	id, userID, typ, name string
	secret                []byte
	step                  int64
	created, lastUsed     nullTime
}

func (r *factorRow) dest() []any {
	return []any{&r.id, &r.userID, &r.typ, &r.name, &r.secret, &r.step, &r.created, &r.lastUsed}
}

func (r *factorRow) factor() core.Factor {
	f := core.Factor{ID: r.id, UserID: r.userID, Type: core.FactorType(r.typ), Name: r.name,
		Step: r.step, CreatedAt: r.created.t, LastUsedAt: r.lastUsed.t}
	if len(r.secret) > 0 {
		f.Secret = r.secret
	}
	return f
}
