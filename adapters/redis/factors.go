package redisadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
	rc "github.com/authport/authport/core/recordcodec"
)

var (
	_ core.FactorCreator       = (*Adapter)(nil)
	_ core.FactorsByUserLister = (*Adapter)(nil)
	_ core.FactorSwapper       = (*Adapter)(nil)
	_ core.FactorDeleter       = (*Adapter)(nil)
)

// A user's factors are the fields of one hash in the user's slot,
// <p>user:{<uid>}:factors (escaped factor id -> encodeFactor), so that
// listing them is one HVALS, swapping one is one script and deleteUser
// takes them with the rest of the user. The id's index key,
// <p>factor:{<id>} (the escaped user id), in its own slot, makes the id
// unique across users: createFactor claims it as createAuthenticator
// claims a credential id.

// CreateFactor implements [core.FactorCreator]: one script on a single
// node (which claims the id's index key and writes the factor); claim,
// write, confirm on a cluster, as createAuthenticator.
func (a *Adapter) CreateFactor(ctx context.Context, factor core.Factor) (*core.Factor, error) {
	const m = core.MethodCreateFactor
	f := factor.Normalize()
	if err := errors.Join(shared.CheckTime(m, "createdAt", &f.CreatedAt), checkOptTime(m, "lastUsedAt", &f.LastUsedAt)); err != nil {
		return nil, err
	}
	err := a.attach(ctx, f.UserID, a.k.factor(f.ID), a.k.factors, shared.Escape(f.ID), encodeFactor(&f),
		fmt.Sprintf("factor id %q", f.ID))
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// ListFactorsByUserID implements [core.FactorsByUserLister] with one HVALS
// of the user's factors hash.
func (a *Adapter) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	if userID == "" {
		return []core.Factor{}, nil
	}
	return listHash(ctx, a, a.k.factors(userID), decodeFactor, core.CompareFactors)
}

// SwapFactor implements [core.FactorSwapper] with one script in the user's
// slot (luaSwapFactor), on a cluster too: it compares the stored secret
// and step with old's and writes next's name, secret, step and lastUsedAt
// in the same step, so that of concurrent swaps from one value exactly one
// succeeds, across instances. A swap whose reply is lost and that the
// client retries finds its own write and is refused (ErrFactorChanged):
// a lost reply never accepts a code twice.
func (a *Adapter) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	const m = core.MethodSwapFactor
	if err := checkOptTime(m, "lastUsedAt", &next.LastUsedAt); err != nil {
		return nil, err
	}
	if old.UserID == "" || old.ID == "" {
		return nil, nil
	}
	cmp := rc.AppendVarint(rc.AppendStr(nil, string(old.Secret)), old.Step)
	mid := rc.AppendVarint(rc.AppendStrs(nil, next.Name, string(next.Secret)), next.Step)
	var last int64
	if !next.LastUsedAt.IsZero() {
		last = next.LastUsedAt.UnixMilli()
	}
	res, err := a.s.swapFactor.Run(ctx, a.c, []string{a.k.factors(old.UserID)},
		shared.Escape(old.ID), string(cmp), string(mid), string(rc.AppendVarint(nil, last))).Result()
	if shared.IsNil(err) {
		return nil, nil
	}
	if err != nil {
		// ErrReplicaAck (WithReplicaAck) among them: the master may keep
		// the swap, but the call failed, and a code it checked is not
		// accepted.
		return nil, err
	}
	v, ok := res.([]any)
	if !ok || len(v) != 2 {
		return nil, shared.ErrCorrupt
	}
	flag, _ := v[0].(string)
	rec, _ := v[1].(string)
	f, err := decodeFactor(rec)
	switch {
	case err != nil:
		return nil, err
	case f.UserID != old.UserID || f.ID != old.ID:
		return nil, shared.ErrCorrupt
	case flag == "changed":
		return f, fmt.Errorf("factor %q: %w", old.ID, core.ErrFactorChanged)
	case flag != "ok":
		return nil, shared.ErrCorrupt
	}
	return f, nil
}

// DeleteFactor implements [core.FactorDeleter]: one script in the user's
// slot, which on a single node also deletes the id's index key; on a
// cluster the adapter releases the index key after the factor is gone.
func (a *Adapter) DeleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	if userID == "" || id == "" {
		return nil, nil
	}
	fk, ptr, field, uid := a.k.factors(userID), a.k.factor(id), shared.Escape(id), shared.Escape(userID)
	if !a.cluster {
		v, err := a.s.deleteFactor.Run(ctx, a.c, []string{fk, ptr}, a.k.p, "S", field, uid).Result()
		if shared.IsNil(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return decodeFactorReply(v)
	}
	return withinDeadline(ctx, func(ctx context.Context) (*core.Factor, error) {
		v, err := a.s.deleteFactor.Run(ctx, a.c, []string{fk}, a.k.p, "C", field, uid).Result()
		if shared.IsNil(err) {
			// No such factor; but a first run whose reply was lost (and
			// that go-redis retried) or a call cut short may have left
			// the index key confirmed without its factor: release it
			// (only a confirmed one: a claim in progress is another
			// create's, which confirms it or lets it expire).
			_, err := again(ctx, func(ctx context.Context) (any, error) {
				return a.s.releaseStale.Run(ctx, a.c, []string{ptr}, uid).Result()
			})
			return nil, err
		}
		// ErrReplicaAck (WithReplicaAck): the master deleted the factor;
		// release its index key all the same, then report it.
		ackErr := shared.ReplicaAckErr(&err)
		if err != nil {
			return nil, err
		}
		// The factor is gone from the user's slot; now its index key.
		if err := a.release(ctx, ptr, userID); err != nil {
			return nil, err
		}
		if ackErr != nil {
			return nil, ackErr
		}
		return decodeFactorReply(v)
	})
}

// decodeFactorReply decodes a script's reply of one factor record.
func decodeFactorReply(v any) (*core.Factor, error) {
	rec, ok := v.(string)
	if !ok {
		return nil, shared.ErrCorrupt
	}
	return decodeFactor(rec)
}

// encodeFactor encodes a (normalized) factor: recordcodec's factor layout
// after the version byte. luaSwapFactor reads and splices it.
func encodeFactor(f *core.Factor) string {
	b := make([]byte, 0, 64+len(f.UserID)+len(f.ID)+len(f.Name)+len(f.Secret))
	return string(rc.AppendFactor(append(b, codecVersion), f))
}

func decodeFactor(s string) (*core.Factor, error) {
	r, ok := codecReader(s)
	if !ok {
		return nil, shared.ErrCorrupt
	}
	f := &core.Factor{}
	r.Factor(f)
	if err := corrupt(&r); err != nil {
		return nil, err
	}
	return f, nil
}
