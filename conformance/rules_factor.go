package conformance

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

// factors is the group of the rules of second factors: the extensions
// createFactor, listFactorsByUserId, swapFactor and deleteFactor
// ([core.FactorCreator] and the three beside it) and deleteUser's cascade to
// them.
const factors = "factors"

// factorSwapRace is how many swaps from one stored value the race rules
// run at once: the single use of a TOTP step or a recovery code rests on
// exactly one of them succeeding.
const factorSwapRace = 50

// factorID returns a fresh factor id, shaped like the random UUIDs the
// library assigns: a sequence number in its last part, and a scramble of it
// in its first, so that ids do not sort in the order they were made. Ids
// have one length, so none is a substring of another.
func (e *env) factorID() string {
	n := e.seq.Add(1)
	return fmt.Sprintf("%08x-0000-4000-8000-%012d", uint32(n*2654435761), n)
}

// newFactor returns a factor of the user with every field set, a fresh id
// and a secret with bytes a string-minded store would mangle (0x00, 0xff,
// a quote, a backslash).
func (e *env) newFactor(userID string) core.Factor {
	id := e.factorID()
	return core.Factor{
		ID:         id,
		UserID:     userID,
		Type:       core.FactorTOTP,
		Name:       "Phone " + id[len(id)-4:],
		Secret:     append([]byte("sealed\x00\xff\"\\"), id...),
		Step:       59_123_456,
		CreatedAt:  at(0),
		LastUsedAt: at(time.Hour),
	}
}

// nextOf returns the change a successful use of f writes: a new secret, the
// next step, a new name and a new time of last use.
func (e *env) nextOf(f core.Factor) core.Factor {
	n := f.Clone()
	n.Secret = append([]byte("next\x00"), e.id("s")...)
	n.Step = f.Step + 1
	n.Name = "renamed " + e.id("n")
	n.LastUsedAt = at(2*time.Hour + time.Duration(e.seq.Add(1))*time.Millisecond)
	return n
}

// swapped returns stored as a swapFactor to next leaves it: next's Name,
// Secret, Step and LastUsedAt, stored's other fields, normalised.
func swapped(stored, next core.Factor) core.Factor {
	out := stored.Normalize()
	n := next.Normalize()
	out.Name, out.Secret, out.Step, out.LastUsedAt = n.Name, n.Secret, n.Step, n.LastUsedAt
	return out
}

// canonFactor is a factor in the form the rules compare: times as instants
// in UTC (their precision kept, so that a store keeping more than
// milliseconds shows), an empty secret as nil.
func canonFactor(f core.Factor) core.Factor {
	f = f.Clone()
	if len(f.Secret) == 0 {
		f.Secret = nil
	}
	f.CreatedAt = canonTime(f.CreatedAt)
	f.LastUsedAt = canonTime(f.LastUsedAt)
	return f
}

// sortedFactors returns the factors normalised, ordered by id.
func sortedFactors(fs ...core.Factor) []core.Factor {
	out := make([]core.Factor, len(fs))
	for i, f := range fs {
		out[i] = f.Normalize()
	}
	slices.SortFunc(out, core.CompareFactors)
	return out
}

// createFactor stores the factor through the checked layer and returns
// what it returned, failing the test on an error.
func (e *env) createFactor(t *testing.T, f core.Factor) core.Factor {
	t.Helper()
	return insert(t, e, "createFactor", e.a.CreateFactor, f)
}

// storedFactor creates a new factor of the user ([env.newFactor]) and
// returns it normalised, as stored.
func (e *env) storedFactor(t *testing.T, userID string) core.Factor {
	t.Helper()
	f := e.newFactor(userID)
	e.createFactor(t, f)
	return f.Normalize()
}

// listFactors calls listFactorsByUserId through the checked layer.
func (e *env) listFactors(t *testing.T, userID string) []core.Factor {
	t.Helper()
	list, err := e.a.ListFactorsByUserID(e.ctx, userID)
	return must(t, fmt.Sprintf("listFactorsByUserId(%q)", userID), list, err)
}

// rawFactors returns the factors of the user the raw view shows, in
// canonical form and ordered by id, and whether the view shows factors
// at all ([FactorRaw]).
func (e *env) rawFactors(t *testing.T, userID string) ([]core.Factor, bool) {
	t.Helper()
	if _, ok := e.raw.(FactorRaw); !ok {
		return nil, false
	}
	var out []core.Factor
	for _, f := range e.state(t).Factors {
		if f.UserID == userID {
			out = append(out, f)
		}
	}
	return out, true
}

// expectFactors fails the test unless the user's factors are want (any
// order), as listFactorsByUserId returns them and, where the raw view shows
// factors, as stored.
func (e *env) expectFactors(t *testing.T, what, userID string, want ...core.Factor) {
	t.Helper()
	w := sortedFactors(want...)
	expectEqual(t, what+": listFactorsByUserId", e.listFactors(t, userID), w)
	if raw, ok := e.rawFactors(t, userID); ok {
		cw := make([]core.Factor, len(w))
		for i, f := range w {
			cw[i] = canonFactor(f)
		}
		if len(raw) == 0 && len(cw) == 0 {
			return
		}
		expectEqual(t, what+": the stored factors (raw view)", raw, cw)
	}
}

// expectFactor compares a factor the checked layer returned with the one
// expected.
func expectFactor(t *testing.T, what string, got *core.Factor, want core.Factor) {
	t.Helper()
	if returned(t, what, got, want) {
		expectEqual(t, what, *got, want.Normalize())
	}
}

// factorAdapter returns the adapter under test itself as the four factor
// interfaces, for rules that look at what it returns before the checked
// layer normalises it.
func (e *env) factorAdapter(t *testing.T) interface {
	core.FactorCreator
	core.FactorsByUserLister
	core.FactorSwapper
	core.FactorDeleter
} {
	t.Helper()
	type all interface {
		core.FactorCreator
		core.FactorsByUserLister
		core.FactorSwapper
		core.FactorDeleter
	}
	a, ok := e.adapter.(all)
	if !ok {
		t.Fatalf("adapter %T does not implement all four factor methods", e.adapter)
	}
	return a
}

// expectFactorSwapRefused calls swapFactor of stored from old, which
// differs from it in its secret or step, through the checked layer and on
// the adapter itself, and fails the test unless each fails with
// core.ErrFactorChanged and changes nothing, and the adapter returns the
// stored factor.
func (e *env) expectFactorSwapRefused(t *testing.T, what string, old, stored core.Factor) {
	t.Helper()
	next := e.nextOf(old)
	e.expectRefused(t, what, what, core.ErrFactorChanged, func() error {
		got, err := e.a.SwapFactor(e.ctx, old, next)
		if got != nil {
			t.Errorf("%s: the checked layer returned %s with its error", what, show(got))
		}
		return err
	})
	var got *core.Factor
	e.expectRefused(t, what+" on the adapter itself", what+" on the adapter itself", core.ErrFactorChanged, func() error {
		var err error
		got, err = e.factorAdapter(t).SwapFactor(e.ctx, old.Normalize(), next.Normalize())
		return err
	})
	if returned(t, "the factor "+what+" returned", got, stored) {
		expectEqual(t, "the factor "+what+" returned", got.Normalize(), stored.Normalize())
	}
	e.expectFactors(t, "after "+what, stored.UserID, stored)
}

// factorRules are the rules of second factors. All but all_four_or_none
// run only where the adapter offers the four factor methods.
func factorRules() []rule {
	x := core.ExtensionCreateFactor
	needs := []core.Method{createUser}
	rs := []rule{
		{group: factors, name: "round_trip_every_field", needs: needs, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			f := e.newFactor(u.ID)
			got := e.createFactor(t, f)
			expectEqual(t, "createFactor result", got, f.Normalize())
			e.storedFactor(t, other.ID)
			e.expectFactors(t, "a factor with every field set", u.ID, f)
		}},
		{group: factors, name: "times_utc_millisecond", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			f := e.newFactor(u.ID)
			f.CreatedAt, f.LastUsedAt = at(0), at(36*time.Hour+time.Microsecond)
			e.createFactor(t, f)
			// The adapter itself, before the checked layer normalises.
			list, err := e.factorAdapter(t).ListFactorsByUserID(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 {
				t.Fatalf("listFactorsByUserId on the adapter itself = %s; want the one factor", show(list))
			}
			for what, tm := range map[string]time.Time{"createdAt": list[0].CreatedAt, "lastUsedAt": list[0].LastUsedAt} {
				expectUTC(t, what, tm)
				if !tm.Equal(core.NormalizeTime(tm)) {
					t.Errorf("%s = %s; adapters keep milliseconds, no finer", what, tm.Format(time.RFC3339Nano))
				}
			}
			expectEqual(t, "the times", [2]time.Time{canonTime(list[0].CreatedAt), canonTime(list[0].LastUsedAt)},
				[2]time.Time{core.NormalizeTime(f.CreatedAt), core.NormalizeTime(f.LastUsedAt)})
			e.expectFactors(t, "a factor with sub-millisecond times in another zone", u.ID, f)
		}},
		{group: factors, name: "never_used_stays_zero", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			f := e.newFactor(u.ID)
			f.LastUsedAt = time.Time{}
			got := e.createFactor(t, f)
			if !got.LastUsedAt.IsZero() {
				t.Errorf("createFactor result lastUsedAt = %s; want the zero time (never used)", got.LastUsedAt)
			}
			e.expectFactors(t, "a factor never used", u.ID, f)
		}},
		{group: factors, name: "secret_bytes_kept_exactly", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			every := make([]byte, core.MaxFactorSecret)
			for i := range every {
				every[i] = byte(255 - i%256)
			}
			var want []core.Factor
			for _, secret := range [][]byte{
				every,
				{0x00},
				{0x00, 0x00},
				[]byte("ab"),
				[]byte("ab\x00"), // differs from "ab" only by a trailing NUL
				{0xff},
				[]byte("\xc3(\xff\xfe invalid UTF-8"),
				[]byte(`{"json":"\u0000"}\`),
				[]byte("AAAA"), // base64 of zeros, in case a store decodes it
			} {
				f := e.newFactor(u.ID)
				f.Secret = secret
				e.createFactor(t, f)
				want = append(want, f)
			}
			e.expectFactors(t, "secrets of every byte value", u.ID, want...)
		}},
		{group: factors, name: "empty_secret_is_nil", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			for what, secret := range map[string][]byte{"a nil": nil, "an empty": {}} {
				f := e.newFactor(u.ID)
				f.Secret = secret
				if got := e.createFactor(t, f); got.Secret != nil {
					t.Errorf("createFactor with %s secret: secret %q; want nil", what, got.Secret)
				}
			}
			for _, f := range e.listFactors(t, u.ID) {
				if f.Secret != nil {
					t.Errorf("listFactorsByUserId: factor %s has secret %q; want nil", f.ID, f.Secret)
				}
			}
			if raw, ok := e.rawFactors(t, u.ID); ok && len(raw) != 2 {
				t.Errorf("raw view: %d factors of the user stored; want 2", len(raw))
			}
		}},
		{group: factors, name: "fields_at_their_limits", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			var want []core.Factor
			add := func(change func(f *core.Factor)) {
				f := e.newFactor(u.ID)
				change(&f)
				e.createFactor(t, f)
				want = append(want, f)
			}
			for _, typ := range []core.FactorType{core.FactorTOTP, core.FactorRecoveryCodes, core.FactorEmail, core.FactorPasskey, core.FactorTrustedDevice,
				"x", core.FactorType(strings.Repeat("z9_-", core.MaxFactorType/4))} {
				add(func(f *core.Factor) { f.Type = typ })
			}
			for _, name := range []string{"", strings.Repeat("é", core.MaxFactorName/2), "YubiKey 5C ✓ 🔑", "  padded  ", "a:b{c}d e*f?[g]\\h"} {
				add(func(f *core.Factor) { f.Name = name })
			}
			for _, step := range []int64{0, 1, math.MaxInt64} {
				add(func(f *core.Factor) { f.Step = step })
			}
			e.expectFactors(t, "factors with every type, name and step at the limits", u.ID, want...)
		}},
		{group: factors, name: "invalid_factor_refused", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			expectInvalid(t, e, "createFactor", e.a.CreateFactor, spoiled(func() core.Factor { return e.newFactor(u.ID) }, map[string]func(*core.Factor){
				"an empty id":               func(f *core.Factor) { f.ID = "" },
				"an empty user id":          func(f *core.Factor) { f.UserID = "" },
				"an empty type":             func(f *core.Factor) { f.Type = "" },
				"an upper-case type":        func(f *core.Factor) { f.Type = "TOTP" },
				"a type of 33 bytes":        func(f *core.Factor) { f.Type = core.FactorType(strings.Repeat("t", core.MaxFactorType+1)) },
				"a name of 257 bytes":       func(f *core.Factor) { f.Name = strings.Repeat("n", core.MaxFactorName+1) },
				"a secret of 4097 bytes":    func(f *core.Factor) { f.Secret = make([]byte, core.MaxFactorSecret+1) },
				"a negative step":           func(f *core.Factor) { f.Step = -1 },
				"no creation time":          func(f *core.Factor) { f.CreatedAt = time.Time{} },
				"a NUL byte in the id":      func(f *core.Factor) { f.ID += "\x00" },
				"invalid UTF-8 in the name": func(f *core.Factor) { f.Name = "bad\xff" },
				"a NUL byte in the user id": func(f *core.Factor) { f.UserID += "\x00" },
				"a type with a space":       func(f *core.Factor) { f.Type = "to tp" },
			}))
			e.expectFactors(t, "after the refused createFactor calls", u.ID)
		}},
		{group: factors, name: "unknown_user_not_found", needs: needs, run: func(t *testing.T, e *env) {
			e.storedUser(t)
			f := e.newFactor("no-such-user")
			e.expectRefused(t, "createFactor for an unknown user", "the refused createFactor", core.ErrNotFound, func() error {
				return errOf(e.a.CreateFactor(e.ctx, f))
			})
			e.expectFactors(t, "after createFactor for an unknown user", "no-such-user")
		}},
		{group: factors, name: "duplicate_id_refused", needs: needs, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			for what, owner := range map[string]string{"the same user": u.ID, "another user": other.ID} {
				dup := e.newFactor(owner)
				dup.ID = f.ID
				e.expectRefused(t, "createFactor with the id of a factor of "+what, "the refused createFactor", core.ErrAlreadyExists, func() error {
					return errOf(e.a.CreateFactor(e.ctx, dup))
				})
			}
			e.expectFactors(t, "the factor whose id was taken again", u.ID, f)
			e.expectFactors(t, "the other user, refused the id", other.ID)
		}},
		{group: factors, name: "list_ordered_by_id", needs: needs, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			ids := make([]string, 5)
			for i := range ids {
				ids[i] = e.factorID()
			}
			var want []core.Factor
			for _, i := range []int{3, 0, 4, 1, 2} { // not in the order of the ids
				f := e.newFactor(u.ID)
				f.ID = ids[i]
				f.Type = []core.FactorType{core.FactorTOTP, core.FactorRecoveryCodes, core.FactorPasskey}[i%3]
				e.createFactor(t, f)
				want = append(want, f)
				e.storedFactor(t, other.ID)
			}
			list := e.listFactors(t, u.ID)
			if !slices.IsSortedFunc(list, core.CompareFactors) {
				t.Errorf("listFactorsByUserId is not ordered by id: %v", factorIDs(list))
			}
			e.expectFactors(t, "five factors beside another user's", u.ID, want...)
		}},
		{group: factors, name: "unknown_user_is_an_empty_list", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			e.storedFactor(t, u.ID)
			without := e.storedUser(t)
			for what, id := range map[string]string{"an unknown user": "no-such-user", "a user without factors": without.ID} {
				list, err := e.factorAdapter(t).ListFactorsByUserID(e.ctx, id)
				if err != nil || list == nil || len(list) != 0 {
					t.Errorf("listFactorsByUserId of %s on the adapter itself = %s (nil: %t), %v; want an empty, non-nil list and no error", what, show(list), list == nil, err)
				}
			}
		}},
		{group: factors, name: "copies_in_and_out", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			fa := e.factorAdapter(t)
			f := e.newFactor(u.ID).Normalize()
			in := f.Clone()
			got, err := fa.CreateFactor(e.ctx, in)
			if err != nil || got == nil {
				t.Fatalf("createFactor on the adapter itself = %s, %v", show(got), err)
			}
			clear(in.Secret)
			clear(got.Secret)
			e.expectFactors(t, "after the caller overwrote the secret it passed to createFactor and got back", u.ID, f)
			list, err := fa.ListFactorsByUserID(e.ctx, u.ID)
			if err != nil || len(list) != 1 {
				t.Fatalf("listFactorsByUserId on the adapter itself = %s, %v", show(list), err)
			}
			clear(list[0].Secret)
			e.expectFactors(t, "after the caller overwrote the secret listFactorsByUserId returned", u.ID, f)
			next := e.nextOf(f).Normalize()
			swapIn := next.Clone()
			got, err = fa.SwapFactor(e.ctx, f, swapIn)
			if err != nil || got == nil {
				t.Fatalf("swapFactor on the adapter itself = %s, %v", show(got), err)
			}
			clear(swapIn.Secret)
			clear(got.Secret)
			e.expectFactors(t, "after the caller overwrote the secrets it passed to swapFactor and got back", u.ID, swapped(f, next))
		}},
		{group: factors, name: "swap_from_the_stored_value", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			beside := e.storedFactor(t, u.ID)
			next := e.nextOf(f)
			got, err := e.a.SwapFactor(e.ctx, f, next)
			if err != nil {
				t.Fatalf("swapFactor from the stored secret and step: %v", err)
			}
			expectFactor(t, "swapFactor result", got, swapped(f, next))
			e.expectFactors(t, "after swapFactor", u.ID, swapped(f, next), beside)
		}},
		{group: factors, name: "swap_ignores_the_rest_of_next", needs: needs, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			next := e.nextOf(f)
			next.ID, next.UserID, next.Type, next.CreatedAt = e.factorID(), other.ID, core.FactorRecoveryCodes, at(-48*time.Hour)
			got, err := e.a.SwapFactor(e.ctx, f, next)
			if err != nil {
				t.Fatalf("swapFactor with another id, user, type and creation time in next: %v", err)
			}
			expectFactor(t, "swapFactor result", got, swapped(f, next))
			e.expectFactors(t, "the swapped factor keeps its id, user, type and creation time", u.ID, swapped(f, next))
			e.expectFactors(t, "next's user gains nothing", other.ID)
		}},
		{group: factors, name: "swap_compares_only_secret_and_step", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			old := f.Clone()
			old.Name, old.Type, old.CreatedAt, old.LastUsedAt = "a stale name", core.FactorEmail, at(-time.Hour), time.Time{}
			next := e.nextOf(f)
			got, err := e.a.SwapFactor(e.ctx, old, next)
			if err != nil {
				t.Fatalf("swapFactor from the stored secret and step, with another name, type and times in old: %v", err)
			}
			expectFactor(t, "swapFactor result", got, swapped(f, next))
			e.expectFactors(t, "after swapFactor", u.ID, swapped(f, next))
		}},
		{group: factors, name: "swap_from_another_value_changes_nothing", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			for what, spoil := range map[string]func(old *core.Factor){
				"another secret":                     func(old *core.Factor) { old.Secret = []byte("another secret") },
				"the secret with a byte changed":     func(old *core.Factor) { old.Secret[len(old.Secret)-1] ^= 1 },
				"the secret with a NUL byte added":   func(old *core.Factor) { old.Secret = append(old.Secret, 0) },
				"the secret cut short":               func(old *core.Factor) { old.Secret = old.Secret[:len(old.Secret)-1] },
				"the secret's first byte only":       func(old *core.Factor) { old.Secret = old.Secret[:1] },
				"no secret":                          func(old *core.Factor) { old.Secret = nil },
				"the step before":                    func(old *core.Factor) { old.Step-- },
				"the step after":                     func(old *core.Factor) { old.Step++ },
				"step 0":                             func(old *core.Factor) { old.Step = 0 },
				"the stored secret and another step": func(old *core.Factor) { old.Step += 1 << 40 },
			} {
				old := f.Clone()
				spoil(&old)
				e.expectFactorSwapRefused(t, "swapFactor from "+what, old, f)
			}
		}},
		{group: factors, name: "swap_replayed_refused", needs: needs, run: func(t *testing.T, e *env) {
			// A TOTP step accepted, then the same code again: the second
			// swap starts from the value the first one replaced.
			u := e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			next := e.nextOf(f)
			if _, err := e.a.SwapFactor(e.ctx, f, next); err != nil {
				t.Fatalf("the first swapFactor: %v", err)
			}
			e.expectFactorSwapRefused(t, "swapFactor replayed from the value already replaced", f, swapped(f, next))
		}},
		{group: factors, name: "swap_empty_secret_matches_none", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			f := e.newFactor(u.ID)
			f.Secret = nil
			e.createFactor(t, f)
			old := f.Clone()
			old.Secret = []byte{}
			next := e.nextOf(f)
			next.Secret, next.Name, next.LastUsedAt = []byte{}, "", time.Time{}
			got, err := e.a.SwapFactor(e.ctx, old, next)
			if err != nil {
				t.Fatalf("swapFactor of a factor without a secret from an empty secret: %v", err)
			}
			want := swapped(f, next)
			expectFactor(t, "swapFactor to an empty secret, no name and no time of last use", got, want)
			e.expectFactors(t, "after swapFactor", u.ID, want)
			e.expectFactorSwapRefused(t, "swapFactor of a factor without a secret from a secret", e.withSecret(want, "not none"), want)
		}},
		{group: factors, name: "swap_of_another_users_factor_is_nil", needs: needs, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			e.storedFactor(t, other.ID)
			old := f.Clone()
			old.UserID = other.ID
			expectNothing(t, e, "swapFactor naming another user's factor", func() (*core.Factor, error) {
				return e.a.SwapFactor(e.ctx, old, e.nextOf(f))
			})
			expectNothing(t, e, "swapFactor naming another user's factor, on the adapter itself", func() (*core.Factor, error) {
				return e.factorAdapter(t).SwapFactor(e.ctx, old, e.nextOf(f).Normalize())
			})
			e.expectFactors(t, "the factor named with another user", u.ID, f)
		}},
		{group: factors, name: "swap_of_a_missing_id_is_nil", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			for what, id := range map[string]string{"an unknown id": e.factorID(), "the id cut short": f.ID[:len(f.ID)-1]} {
				old := f.Clone()
				old.ID = id
				expectNothing(t, e, "swapFactor of "+what, func() (*core.Factor, error) { return e.a.SwapFactor(e.ctx, old, e.nextOf(f)) })
			}
			ghost := e.newFactor("no-such-user")
			expectNothing(t, e, "swapFactor of an unknown user's factor", func() (*core.Factor, error) { return e.a.SwapFactor(e.ctx, ghost, e.nextOf(ghost)) })
			e.expectFactors(t, "the user's factor", u.ID, f)
		}},
		{group: factors, name: "concurrent_swaps_from_one_value_one_wins", needs: needs, run: func(t *testing.T, e *env) {
			e.runFactorSwapRace(t, []*core.Store{e.a})
		}},
		{group: factors, name: "concurrent_swaps_on_two_instances_one_wins", needs: needs, needsPeer: true, run: func(t *testing.T, e *env) {
			if !core.Probe(e.peer).HasExtension(core.ExtensionSwapFactor) {
				t.Fatalf("the peer adapter lacks swapFactor, which the fixture's adapter has")
			}
			e.runFactorSwapRace(t, []*core.Store{e.a, e.peer})
		}},
		{group: factors, name: "concurrent_swaps_of_different_factors_all_succeed", needs: needs, run: func(t *testing.T, e *env) {
			// Each factor's swap starts from its own stored value: none
			// may fail because another factor of the user changed.
			const n = 20
			u := e.storedUser(t)
			stored := make([]core.Factor, n)
			next := make([]core.Factor, n)
			for i := range stored {
				stored[i] = e.storedFactor(t, u.ID)
				next[i] = e.nextOf(stored[i])
			}
			errs := make([]error, n)
			coretest.Concurrently(n, func(i int) { _, errs[i] = e.a.SwapFactor(e.ctx, stored[i], next[i]) })
			want := make([]core.Factor, n)
			for i, err := range errs {
				if err != nil {
					t.Errorf("swapFactor of factor %d of %d, each from its own stored value, at once: %v", i, n, err)
				}
				want[i] = swapped(stored[i], next[i])
			}
			e.expectFactors(t, "after the concurrent swaps", u.ID, want...)
		}},
		{group: factors, name: "delete_returns_it_then_gone", needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			beside := e.storedFactor(t, u.ID)
			got, err := e.a.DeleteFactor(e.ctx, u.ID, f.ID)
			if err != nil {
				t.Fatalf("deleteFactor: %v", err)
			}
			expectFactor(t, "deleteFactor result", got, f)
			e.expectFactors(t, "after deleteFactor", u.ID, beside)
			e.expectNoMention(t, "after deleteFactor", f.ID)
			expectNothing(t, e, "deleteFactor of the deleted factor again", func() (*core.Factor, error) { return e.a.DeleteFactor(e.ctx, u.ID, f.ID) })
			expectNothing(t, e, "swapFactor of the deleted factor", func() (*core.Factor, error) { return e.a.SwapFactor(e.ctx, f, e.nextOf(f)) })
		}},
		{group: factors, name: "delete_of_another_users_factor_is_nil", needs: needs, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			expectNothing(t, e, "deleteFactor naming another user's factor", func() (*core.Factor, error) { return e.a.DeleteFactor(e.ctx, other.ID, f.ID) })
			expectNothing(t, e, "deleteFactor naming another user's factor, on the adapter itself", func() (*core.Factor, error) {
				return e.factorAdapter(t).DeleteFactor(e.ctx, other.ID, f.ID)
			})
			expectNothing(t, e, "deleteFactor of an unknown id", func() (*core.Factor, error) { return e.a.DeleteFactor(e.ctx, u.ID, e.factorID()) })
			e.expectFactors(t, "the factor named with another user", u.ID, f)
		}},
		{group: factors, name: "delete_frees_the_id", needs: needs, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			f := e.storedFactor(t, u.ID)
			if _, err := e.a.DeleteFactor(e.ctx, u.ID, f.ID); err != nil {
				t.Fatal(err)
			}
			again := e.newFactor(other.ID)
			again.ID = f.ID
			e.createFactor(t, again)
			e.expectFactors(t, "the id taken again by another user", other.ID, again)
			e.expectFactors(t, "the user whose factor was deleted", u.ID)
		}},
		{group: factors, name: "deleteUser_deletes_the_users_factors", needs: []core.Method{createUser, deleteUser}, run: func(t *testing.T, e *env) {
			u, other := e.storedUser(t), e.storedUser(t)
			var gone, kept []core.Factor
			for range 3 {
				gone = append(gone, e.storedFactor(t, u.ID))
				kept = append(kept, e.storedFactor(t, other.ID))
			}
			if _, err := e.a.DeleteUser(e.ctx, u.ID); err != nil {
				t.Fatalf("deleteUser: %v", err)
			}
			e.expectFactors(t, "the deleted user's", u.ID)
			e.expectFactors(t, "another user's, after deleteUser", other.ID, kept...)
			e.expectNoMention(t, "after deleteUser of a user with factors", u.ID)
			for _, f := range gone {
				e.expectNoMention(t, "after deleteUser of a user with factors", f.ID)
			}
			// The same id again starts with nothing, and the ids are free.
			again := e.newUser()
			again.ID = u.ID
			e.createUser(t, again)
			e.expectFactors(t, "a user created again with the deleted user's id", u.ID)
			reuse := e.newFactor(other.ID)
			reuse.ID = gone[0].ID
			e.createFactor(t, reuse)
		}},
		{group: factors, name: "raw_view_holds_what_was_written", needsFactorRaw: true, needs: needs, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			f := e.newFactor(u.ID)
			f.Secret = bytes.Repeat([]byte{0x00, 0xff, 0x80, '"'}, core.MaxFactorSecret/4)
			e.createFactor(t, f)
			raw, _ := e.rawFactors(t, u.ID)
			expectEqual(t, "the stored factor", raw, []core.Factor{canonFactor(f.Normalize())})
			next := e.nextOf(f)
			if _, err := e.a.SwapFactor(e.ctx, f, next); err != nil {
				t.Fatal(err)
			}
			raw, _ = e.rawFactors(t, u.ID)
			expectEqual(t, "the stored factor after swapFactor", raw, []core.Factor{canonFactor(swapped(f, next))})
			if _, err := e.a.DeleteFactor(e.ctx, u.ID, f.ID); err != nil {
				t.Fatal(err)
			}
			if raw, _ = e.rawFactors(t, u.ID); len(raw) != 0 {
				t.Errorf("stored after deleteFactor: %s", show(raw))
			}
		}},
	}
	for i := range rs {
		rs[i].extension = x
		run := rs[i].run
		rs[i].run = func(t *testing.T, e *env) {
			for _, m := range core.FactorMethods()[1:] {
				e.skipWithout(t, core.Extension(m))
			}
			run(t, e)
		}
	}
	return append([]rule{{group: factors, name: "all_four_or_none", run: func(t *testing.T, e *env) {
		caps := core.Probe(e.adapter)
		var has, lacks []core.Method
		for _, m := range core.FactorMethods() {
			if caps.HasExtension(core.Extension(m)) {
				has = append(has, m)
			} else {
				lacks = append(lacks, m)
			}
		}
		if len(has) > 0 && len(lacks) > 0 {
			t.Errorf("adapter %s offers %v but not %v: the factor methods come all four or none", caps.Adapter(), has, lacks)
		}
	}}}, rs...)
}

// withSecret returns f with the secret s.
func (e *env) withSecret(f core.Factor, s string) core.Factor {
	f = f.Clone()
	f.Secret = []byte(s)
	return f
}

// runFactorSwapRace runs [factorSwapRace] swaps of one factor from its
// stored value to as many different values at once, spread over the
// instances, and fails the test unless exactly one succeeds, every other
// fails with core.ErrFactorChanged, and the stored factor is the winner's.
func (e *env) runFactorSwapRace(t *testing.T, instances []*core.Store) {
	t.Helper()
	u := e.storedUser(t)
	f := e.storedFactor(t, u.ID)
	next := make([]core.Factor, factorSwapRace)
	for i := range next {
		next[i] = e.nextOf(f)
		next[i].Step = f.Step + int64(i) + 1
	}
	errs := make([]error, factorSwapRace)
	got := make([]*core.Factor, factorSwapRace)
	coretest.Concurrently(factorSwapRace, func(i int) {
		got[i], errs[i] = instances[i%len(instances)].SwapFactor(e.ctx, f, next[i])
	})
	expectOneWon(t, errs, core.ErrFactorChanged, "a losing concurrent swapFactor",
		fmt.Sprintf("concurrent swapFactor calls from one value on %d instance(s) succeeded", len(instances)))
	for i, err := range errs {
		if err == nil {
			expectFactor(t, "the winning swapFactor's result", got[i], swapped(f, next[i]))
			e.expectFactors(t, "after the race", u.ID, swapped(f, next[i]))
		}
	}
}

// factorIDs returns the ids of the factors, in their order.
func factorIDs(fs []core.Factor) []string {
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	return ids
}
