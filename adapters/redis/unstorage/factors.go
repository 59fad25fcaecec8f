package unstorage

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

var (
	_ core.FactorCreator       = (*Adapter)(nil)
	_ core.FactorsByUserLister = (*Adapter)(nil)
	_ core.FactorSwapper       = (*Adapter)(nil)
	_ core.FactorDeleter       = (*Adapter)(nil)
)

// uFactorDoc is a factor's document, at authport:factor:<id> (keys
// @auth/unstorage-adapter never reads): its Secret in standard base64
// ("" for none), its times as ISO 8601 strings, lastUsedAt absent when
// never used.
type uFactorDoc struct {
	ID         string `json:"id"`
	UserID     string `json:"userId"`
	Type       string `json:"factorType"`
	Name       string `json:"name"`
	Secret     string `json:"secret"`
	Step       int64  `json:"step"`
	CreatedAt  string `json:"createdAt"`
	LastUsedAt string `json:"lastUsedAt,omitempty"`
}

func encodeUFactor(f *core.Factor) (string, error) {
	return marshalJSON(uFactorDoc{
		ID: f.ID, UserID: f.UserID, Type: string(f.Type), Name: f.Name,
		Secret: base64.StdEncoding.EncodeToString(f.Secret), Step: f.Step,
		CreatedAt: isoTime(f.CreatedAt), LastUsedAt: optISOTime(f.LastUsedAt),
	})
}

// decodeUFactor decodes a factor document; nil, nil when s is not the
// factor id's.
func decodeUFactor(s, id string) (*core.Factor, error) {
	d, m, err := decodeDoc[uFactorDoc](s, "factor", "id", id)
	if d == nil {
		return nil, err
	}
	bad := func(what string) error { return fmt.Errorf("%w: factor %q: %s", shared.ErrCorrupt, id, what) }
	if _, ok := m["step"]; !ok {
		return nil, bad("no step")
	}
	f := &core.Factor{ID: d.ID, UserID: d.UserID, Type: core.FactorType(d.Type), Name: d.Name, Step: d.Step}
	if !f.Type.Valid() || f.Step < 0 || f.UserID == "" {
		return nil, bad("bad type, step or user id")
	}
	if f.Secret, err = base64.StdEncoding.Strict().DecodeString(d.Secret); err != nil {
		return nil, bad("secret is not base64")
	}
	if len(f.Secret) == 0 {
		f.Secret = nil
	}
	if f.CreatedAt, err = parseISOTime(d.CreatedAt); err != nil {
		return nil, err
	}
	if f.LastUsedAt, err = parseOptISOTime(d.LastUsedAt); err != nil {
		return nil, err
	}
	return f, nil
}

// checkFactorTimes refuses times a factor document cannot hold.
func checkFactorTimes(m core.Method, f *core.Factor) error {
	err := checkISOTime(m, "createdAt", &f.CreatedAt)
	if err == nil && !f.LastUsedAt.IsZero() {
		err = checkISOTime(m, "lastUsedAt", &f.LastUsedAt)
	}
	return err
}

// CreateFactor implements [core.FactorCreator] with one script: it checks
// that the user exists and the id's key is free, writes the factor's
// document there and adds its key to the user's set of factor keys.
func (a *Adapter) CreateFactor(ctx context.Context, factor core.Factor) (*core.Factor, error) {
	const m = core.MethodCreateFactor
	f := factor.Normalize()
	doc, err := checkedDoc(&f, encodeUFactor, checkFactorTimes(m, &f))
	if err != nil {
		return nil, err
	}
	key := a.k.factor(f.ID)
	res, err := a.s.createFactor.Run(ctx, a.c, []string{a.k.user(f.UserID), key, a.k.ownFactors(f.UserID)}, f.UserID, doc, key).Text()
	if err != nil {
		return nil, err
	}
	if err := replyErr(res, f.UserID, fmt.Sprintf("factor id %q", f.ID)); err != nil {
		return nil, err
	}
	return &f, nil
}

// readFactor reads the document of the factor id if it is the user's: its
// raw value (for compare-and-set) and the factor, nil when the user has no
// such factor.
func (a *Adapter) readFactor(ctx context.Context, userID, id string) (string, *core.Factor, error) {
	raw, f, err := readDoc(ctx, a, a.k.factor(id), func(raw string) (*core.Factor, error) { return decodeUFactor(raw, id) })
	if err != nil || f == nil || f.UserID != userID {
		return "", nil, err
	}
	return raw, f, nil
}

// ListFactorsByUserID implements [core.FactorsByUserLister]: the documents
// of the user's set of factor keys, in one MGET, those that are the
// user's.
func (a *Adapter) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	if userID == "" {
		return []core.Factor{}, nil
	}
	keys, err := a.c.SMembers(ctx, a.k.ownFactors(userID)).Result()
	if err != nil {
		return nil, err
	}
	return listDocs(ctx, a, keys, func(k, raw string) (*core.Factor, error) {
		doc, _ := object(raw)
		id, _ := stringField(doc, "id")
		f, err := decodeUFactor(raw, id)
		if err != nil || f == nil || f.UserID != userID || a.k.factor(id) != k {
			return nil, err
		}
		return f, nil
	}, core.CompareFactors)
}

// SwapFactor implements [core.FactorSwapper] by compare-and-set on the
// factor's document: read it, compare its secret and step with old's, and
// write next's fields only if the document is still the one read (the
// loop reads again when another writer changed it, and then finds its
// secret or step changed). Of concurrent swaps from one value, one
// succeeds.
func (a *Adapter) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	const m = core.MethodSwapFactor
	if !next.LastUsedAt.IsZero() {
		if err := checkISOTime(m, "lastUsedAt", &next.LastUsedAt); err != nil {
			return nil, err
		}
	}
	if old.UserID == "" || old.ID == "" {
		return nil, nil
	}
	return shared.CAS(ctx, func() (*core.Factor, bool, error) {
		raw, f, err := a.readFactor(ctx, old.UserID, old.ID)
		if err != nil || f == nil {
			return nil, true, err
		}
		if !bytes.Equal(f.Secret, old.Secret) || f.Step != old.Step {
			return f, true, fmt.Errorf("factor %q: %w", old.ID, core.ErrFactorChanged)
		}
		f.Name, f.Secret, f.Step, f.LastUsedAt = next.Name, bytes.Clone(next.Secret), next.Step, next.LastUsedAt
		if len(f.Secret) == 0 {
			f.Secret = nil
		}
		doc, err := encodeUFactor(f)
		if err != nil {
			return nil, true, err
		}
		res, err := a.s.replace.Run(ctx, a.c, []string{a.k.factor(old.ID)}, raw, doc).Text()
		if err != nil || res != "ok" {
			return nil, false, err
		}
		return f, true, nil
	})
}

// DeleteFactor implements [core.FactorDeleter]: it deletes the factor's
// document, if it is still the one read and the user's, and its key from
// the user's set.
func (a *Adapter) DeleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	if userID == "" || id == "" {
		return nil, nil
	}
	key := a.k.factor(id)
	return shared.CAS(ctx, func() (*core.Factor, bool, error) {
		raw, f, err := a.readFactor(ctx, userID, id)
		if err != nil || f == nil {
			return nil, true, err
		}
		res, err := a.s.deleteFactor.Run(ctx, a.c, []string{key, a.k.ownFactors(userID)}, raw, key).Text()
		if err != nil || res != "ok" {
			return nil, false, err
		}
		return f, true, nil
	})
}
