package selftest_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"
)

// The broken variants of the factor methods. Each breaks one sentence of
// the contract in core/factor.go; the suite runs only its factors and
// deleteUserRace groups against them (variantGroups).

// factorRawView is a memory raw view that also shows the stored factors
// (conformance.FactorRaw).
type factorRawView struct {
	conformance.Raw
	a *memory.Adapter
}

func (r factorRawView) Factors(context.Context) ([]core.Factor, error) {
	return r.a.Snapshot().Factors, nil
}

// storedFactor returns the stored factor with the id, of any user.
func storedFactor(a *memory.Adapter, id string) (core.Factor, bool) {
	fs := a.Snapshot().Factors
	i := slices.IndexFunc(fs, func(f core.Factor) bool { return f.ID == id })
	if i < 0 {
		return core.Factor{}, false
	}
	return fs[i], true
}

// factorSwapIgnoresStep compares the stored secret only: a swap from a
// stale step (an old TOTP time step) wins.
type factorSwapIgnoresStep struct{ *memory.Adapter }

func (a factorSwapIgnoresStep) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	if f, ok := storedFactor(a.Adapter, old.ID); ok && f.UserID == old.UserID && bytes.Equal(f.Secret, old.Secret) {
		old.Step = f.Step
	}
	return a.Adapter.SwapFactor(ctx, old, next)
}

// factorSwapAcrossUsers finds the factor by its id alone: another user's
// id names it.
type factorSwapAcrossUsers struct{ *memory.Adapter }

func (a factorSwapAcrossUsers) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	if f, ok := storedFactor(a.Adapter, old.ID); ok {
		old.UserID = f.UserID
	}
	return a.Adapter.SwapFactor(ctx, old, next)
}

// factorDeleteAcrossUsers deletes the factor with the id whoever owns it.
type factorDeleteAcrossUsers struct{ *memory.Adapter }

func (a factorDeleteAcrossUsers) DeleteFactor(ctx context.Context, userID, id string) (*core.Factor, error) {
	if f, ok := storedFactor(a.Adapter, id); ok {
		userID = f.UserID
	}
	return a.Adapter.DeleteFactor(ctx, userID, id)
}

// factorSwapNotAtomic reads, compares and, two milliseconds later, writes:
// a compare-and-set split in two, so that concurrent swaps from one value
// (one TOTP code sent twice) all win.
type factorSwapNotAtomic struct{ *memory.Adapter }

func (a factorSwapNotAtomic) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	f, ok := storedFactor(a.Adapter, old.ID)
	if !ok || f.UserID != old.UserID {
		return nil, nil
	}
	if !bytes.Equal(f.Secret, old.Secret) || f.Step != old.Step {
		return &f, fmt.Errorf("factor %q: %w", f.ID, core.ErrFactorChanged)
	}
	time.Sleep(2 * time.Millisecond)
	f.Name, f.Secret, f.Step, f.LastUsedAt = next.Name, next.Secret, next.Step, next.LastUsedAt
	if err := a.Import(ctx, memory.Snapshot{Factors: []core.Factor{f}}); err != nil {
		return nil, err
	}
	return &f, nil
}

// factorsOutliveUser leaves the user's factors behind on deleteUser.
type factorsOutliveUser struct{ *memory.Adapter }

func (a factorsOutliveUser) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	list, err := a.ListFactorsByUserID(ctx, id)
	if err != nil {
		return nil, err
	}
	u, err := a.Adapter.DeleteUser(ctx, id)
	if err != nil {
		return nil, err
	}
	return u, a.Import(ctx, memory.Snapshot{Factors: list})
}

// factorAfterUserCheck checks that the user exists, then, a moment later,
// stores the factor without checking again: a deleteUser in between leaves
// an orphan factor.
type factorAfterUserCheck struct{ *memory.Adapter }

func (a factorAfterUserCheck) CreateFactor(ctx context.Context, f core.Factor) (*core.Factor, error) {
	if u, err := a.GetUser(ctx, f.UserID); err != nil || u == nil {
		return nil, fmt.Errorf("createFactor: user: %w", core.ErrNotFound)
	}
	time.Sleep(2 * time.Millisecond)
	f = f.Normalize()
	if err := a.Import(ctx, memory.Snapshot{Factors: []core.Factor{f}}); err != nil {
		return nil, err
	}
	return &f, nil
}

// factorsUnordered lists a user's factors in reverse order of their ids.
type factorsUnordered struct{ *memory.Adapter }

func (a factorsUnordered) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	list, err := a.Adapter.ListFactorsByUserID(ctx, userID)
	slices.Reverse(list)
	return list, err
}

// factorSecretAsText keeps the secret as text, the way a store with a
// string column does: bytes that are not UTF-8 are replaced.
type factorSecretAsText struct{ *memory.Adapter }

func (a factorSecretAsText) CreateFactor(ctx context.Context, f core.Factor) (*core.Factor, error) {
	f.Secret = []byte(strings.ToValidUTF8(string(f.Secret), "\uFFFD"))
	return a.Adapter.CreateFactor(ctx, f)
}

// factorNeverUsedIsEpoch stores a zero time of last use as the Unix epoch,
// as a store with a non-null timestamp column does.
type factorNeverUsedIsEpoch struct{ *memory.Adapter }

func (a factorNeverUsedIsEpoch) CreateFactor(ctx context.Context, f core.Factor) (*core.Factor, error) {
	if f.LastUsedAt.IsZero() {
		f.LastUsedAt = time.Unix(0, 0).UTC()
	}
	return a.Adapter.CreateFactor(ctx, f)
}

// factorSecretNotCopied keeps the secret slice its caller passed to
// createFactor and lists it, instead of a copy: a caller that reuses its
// buffer changes what is stored.
type factorSecretNotCopied struct {
	*memory.Adapter
	mu   *sync.Mutex
	kept map[string][]byte // factor id → the caller's secret
}

func (a factorSecretNotCopied) CreateFactor(ctx context.Context, f core.Factor) (*core.Factor, error) {
	got, err := a.Adapter.CreateFactor(ctx, f)
	if err == nil {
		a.mu.Lock()
		a.kept[f.ID] = f.Secret
		a.mu.Unlock()
	}
	return got, err
}

func (a factorSecretNotCopied) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	list, err := a.Adapter.ListFactorsByUserID(ctx, userID)
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, f := range list {
		if s, ok := a.kept[f.ID]; ok {
			list[i].Secret = s
		}
	}
	return list, err
}

func (a factorSecretNotCopied) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	got, err := a.Adapter.SwapFactor(ctx, old, next)
	if err == nil && got != nil {
		a.mu.Lock()
		delete(a.kept, old.ID)
		a.mu.Unlock()
	}
	return got, err
}

// factorsWithoutDelete offers three of the four factor methods.
type factorsWithoutDelete struct {
	core.Adapter
	a *memory.Adapter
}

func (w factorsWithoutDelete) CreateFactor(ctx context.Context, f core.Factor) (*core.Factor, error) {
	return w.a.CreateFactor(ctx, f)
}

func (w factorsWithoutDelete) ListFactorsByUserID(ctx context.Context, userID string) ([]core.Factor, error) {
	return w.a.ListFactorsByUserID(ctx, userID)
}

func (w factorsWithoutDelete) SwapFactor(ctx context.Context, old, next core.Factor) (*core.Factor, error) {
	return w.a.SwapFactor(ctx, old, next)
}

// factorVariants are the broken factor variants, by name.
func factorVariants() map[string]func() conformance.Fixture {
	fixture := func(wrap func(*memory.Adapter) any) func() conformance.Fixture {
		return func() conformance.Fixture {
			a := memory.New()
			w := wrap(a)
			return conformance.Fixture{Adapter: w, Raw: factorRawView{Raw: memoryRaw(a, nil), a: a}, Peer: func(testing.TB) any { return w }}
		}
	}
	return map[string]func() conformance.Fixture{
		"factor_honest":              fixture(func(a *memory.Adapter) any { return a }),
		"factor_swap_ignores_step":   fixture(func(a *memory.Adapter) any { return factorSwapIgnoresStep{a} }),
		"factor_swap_across_users":   fixture(func(a *memory.Adapter) any { return factorSwapAcrossUsers{a} }),
		"factor_delete_across_users": fixture(func(a *memory.Adapter) any { return factorDeleteAcrossUsers{a} }),
		"factor_swap_not_atomic":     fixture(func(a *memory.Adapter) any { return factorSwapNotAtomic{a} }),
		"factors_outlive_user":       fixture(func(a *memory.Adapter) any { return factorsOutliveUser{a} }),
		"factor_after_user_check":    fixture(func(a *memory.Adapter) any { return factorAfterUserCheck{a} }),
		"factors_unordered":          fixture(func(a *memory.Adapter) any { return factorsUnordered{a} }),
		"factor_secret_as_text":      fixture(func(a *memory.Adapter) any { return factorSecretAsText{a} }),
		"factor_never_used_is_epoch": fixture(func(a *memory.Adapter) any { return factorNeverUsedIsEpoch{a} }),
		"factor_secret_not_copied": fixture(func(a *memory.Adapter) any {
			return factorSecretNotCopied{Adapter: a, mu: new(sync.Mutex), kept: map[string][]byte{}}
		}),
		"factors_without_delete": fixture(func(a *memory.Adapter) any { return factorsWithoutDelete{Adapter: a, a: a} }),
		"factor_no_raw_view": func() conformance.Fixture {
			a := memory.New()
			return conformance.Fixture{Adapter: a, Raw: memoryRaw(a, nil)}
		},
	}
}

// factorCase is a row of TestBrokenVariantsFail's table for a factor
// variant.
type factorCase = struct {
	variant string
	fails   []string
	skips   map[string]string
	passes  []string
}

// factorCases are the factor variants' rows of TestBrokenVariantsFail.
func factorCases() []factorCase {
	every := []string{"factors/all_four_or_none", "factors/round_trip_every_field", "factors/times_utc_millisecond", "factors/never_used_stays_zero",
		"factors/secret_bytes_kept_exactly", "factors/empty_secret_is_nil", "factors/fields_at_their_limits", "factors/invalid_factor_refused",
		"factors/unknown_user_not_found", "factors/duplicate_id_refused", "factors/list_ordered_by_id", "factors/unknown_user_is_an_empty_list",
		"factors/copies_in_and_out", "factors/swap_from_the_stored_value", "factors/swap_ignores_the_rest_of_next",
		"factors/swap_compares_only_secret_and_step", "factors/swap_from_another_value_changes_nothing", "factors/swap_replayed_refused",
		"factors/swap_empty_secret_matches_none", "factors/swap_of_another_users_factor_is_nil", "factors/swap_of_a_missing_id_is_nil",
		"factors/concurrent_swaps_from_one_value_one_wins", "factors/concurrent_swaps_on_two_instances_one_wins",
		"factors/concurrent_swaps_of_different_factors_all_succeed", "factors/delete_returns_it_then_gone",
		"factors/delete_of_another_users_factor_is_nil", "factors/delete_frees_the_id", "factors/deleteUser_deletes_the_users_factors",
		"factors/raw_view_holds_what_was_written", "deleteUserRace/with_factor_leaves_no_orphan"}
	return []factorCase{
		{variant: "factor_honest", passes: every},
		{variant: "factor_swap_ignores_step", fails: []string{"factors/swap_from_another_value_changes_nothing"},
			passes: []string{"factors/swap_from_the_stored_value", "factors/swap_replayed_refused", "factors/concurrent_swaps_from_one_value_one_wins"}},
		{variant: "factor_swap_across_users", fails: []string{"factors/swap_of_another_users_factor_is_nil"},
			passes: []string{"factors/swap_from_the_stored_value", "factors/swap_of_a_missing_id_is_nil"}},
		{variant: "factor_delete_across_users", fails: []string{"factors/delete_of_another_users_factor_is_nil"},
			passes: []string{"factors/delete_returns_it_then_gone", "factors/delete_frees_the_id"}},
		{variant: "factor_swap_not_atomic", fails: []string{"factors/concurrent_swaps_from_one_value_one_wins", "factors/concurrent_swaps_on_two_instances_one_wins"},
			passes: []string{"factors/swap_from_the_stored_value", "factors/swap_from_another_value_changes_nothing", "factors/swap_replayed_refused"}},
		{variant: "factors_outlive_user", fails: []string{"factors/deleteUser_deletes_the_users_factors", "deleteUserRace/with_factor_leaves_no_orphan"},
			passes: []string{"factors/delete_returns_it_then_gone", "deleteUserRace/with_account_leaves_no_orphan"}},
		{variant: "factor_after_user_check", fails: []string{"deleteUserRace/with_factor_leaves_no_orphan"},
			passes: []string{"factors/round_trip_every_field", "factors/deleteUser_deletes_the_users_factors", "deleteUserRace/with_authenticator_leaves_no_orphan"}},
		{variant: "factors_unordered", fails: []string{"factors/list_ordered_by_id"},
			passes: []string{"factors/round_trip_every_field", "factors/unknown_user_is_an_empty_list"}},
		{variant: "factor_secret_as_text", fails: []string{"factors/secret_bytes_kept_exactly", "factors/round_trip_every_field", "factors/raw_view_holds_what_was_written"},
			passes: []string{"factors/empty_secret_is_nil", "factors/unknown_user_is_an_empty_list"}},
		{variant: "factor_never_used_is_epoch", fails: []string{"factors/never_used_stays_zero"},
			passes: []string{"factors/round_trip_every_field", "factors/times_utc_millisecond"}},
		{variant: "factor_secret_not_copied", fails: []string{"factors/copies_in_and_out"},
			passes: []string{"factors/round_trip_every_field", "factors/secret_bytes_kept_exactly"}},
		{variant: "factors_without_delete", fails: []string{"factors/all_four_or_none"},
			skips: map[string]string{"factors/round_trip_every_field": "does not implement deleteFactor (an optional extension)"}},
		{variant: "factor_no_raw_view",
			passes: []string{"factors/round_trip_every_field", "factors/concurrent_swaps_from_one_value_one_wins"},
			skips: map[string]string{
				"factors/raw_view_holds_what_was_written":            "does not implement conformance.FactorRaw",
				"factors/concurrent_swaps_on_two_instances_one_wins": "conformance.Fixture.Peer is nil",
			}},
	}
}
