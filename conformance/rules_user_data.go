package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/authport/authport/core"
)

// userData is the group of the rules on application fields of users
// ([core.User.Data]).
const userData = "userData"

// raw returns v as a JSON value, for building Data maps in rules.
func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with literals
	}
	return b
}

// fullData sets every field of [UserDataFields], with values of the four
// JSON kinds a column can hold.
func fullData(id string) map[string]json.RawMessage {
	return map[string]json.RawMessage{
		"role":     raw("admin"),
		"tenantId": raw("tenant-" + id),
		"level":    raw(3),
		"beta":     raw(true),
	}
}

// userDataRules are the rules on application fields of users: they round
// trip, updates change only the fields they name, and fields that another
// application wrote are kept.
func userDataRules() []rule {
	return []rule{
		{group: userData, name: "round_trip", needs: []core.Method{createUser, getUser, getUserByEmail}, run: func(t *testing.T, e *env) {
			u := e.newUser()
			u.Data = fullData(u.ID)
			e.expectRoundTrip(t, u)
			if e.a.Capabilities().Has(createSession) && e.a.Capabilities().Has(getSessionAndUser) {
				s := e.createSession(t, e.newSession(u.ID))
				su := found(t, "getSessionAndUser", e.getSessionAndUser(t, s.SessionToken))
				expectUser(t, "getSessionAndUser's user", &su.User, u.Normalize())
			}
		}},
		{group: userData, name: "none_is_nil", needs: []core.Method{createUser, getUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			if got := e.getUser(t, u.ID); got == nil || got.Data != nil {
				t.Errorf("getUser of a user created without application fields = %s, want Data nil", show(got))
			}
		}},
		{group: userData, name: "update_changes_only_named_fields", needs: []core.Method{createUser, getUser, updateUser}, run: func(t *testing.T, e *env) {
			u := e.newUser()
			u.Data = fullData(u.ID)
			e.createUser(t, u)
			want := u.Normalize()
			got, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Data: map[string]json.RawMessage{"role": raw("viewer")}})
			if err != nil {
				t.Fatal(err)
			}
			want.Data["role"] = raw("viewer")
			expectUser(t, "updateUser result", got, want)
			expectUser(t, "getUser after updating one field", e.getUser(t, u.ID), want)
			if _, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Name: core.Set(ptr("Grace"))}); err != nil {
				t.Fatal(err)
			}
			want.Name = ptr("Grace")
			expectUser(t, "getUser after an update without application fields", e.getUser(t, u.ID), want)
			expectEqual(t, "stored users", e.state(t).Users, []core.User{canonUser(want)})
		}},
		{group: userData, name: "update_removes_field", needs: []core.Method{createUser, getUser, updateUser}, run: func(t *testing.T, e *env) {
			u := e.newUser()
			u.Data = fullData(u.ID)
			e.createUser(t, u)
			want := u.Normalize()
			up := core.UserUpdate{ID: u.ID, Data: map[string]json.RawMessage{"level": nil, "beta": raw(nil)}}
			if _, err := e.a.UpdateUser(e.ctx, up); err != nil {
				t.Fatal(err)
			}
			delete(want.Data, "level")
			delete(want.Data, "beta")
			expectUser(t, "getUser after removing two fields", e.getUser(t, u.ID), want)
			// Removing the rest leaves no application fields at all.
			up = core.UserUpdate{ID: u.ID, Data: map[string]json.RawMessage{"role": nil, "tenantId": nil}}
			if _, err := e.a.UpdateUser(e.ctx, up); err != nil {
				t.Fatal(err)
			}
			want.Data = nil
			expectUser(t, "getUser after removing every field", e.getUser(t, u.ID), want)
		}},
		{group: userData, name: "typed_field_round_trip", needs: []core.Method{createUser, getUser, updateUser}, run: func(t *testing.T, e *env) {
			role := core.UserField[string]{Name: "role"}
			level := core.UserField[int]{Name: "level"}
			u := e.newUser()
			if err := role.Put(&u, "editor"); err != nil {
				t.Fatal(err)
			}
			e.createUser(t, u)
			var up core.UserUpdate
			up.ID = u.ID
			if err := level.Set(&up, 7); err != nil {
				t.Fatal(err)
			}
			if _, err := e.a.UpdateUser(e.ctx, up); err != nil {
				t.Fatal(err)
			}
			got := e.getUser(t, u.ID)
			r, okR, errR := role.Get(got)
			l, okL, errL := level.Get(got)
			if r != "editor" || !okR || errR != nil || l != 7 || !okL || errL != nil {
				t.Errorf("role = %q %v %v, level = %d %v %v; want editor and 7", r, okR, errR, l, okL, errL)
			}
		}},
		{group: userData, name: "bad_fields_rejected", needs: []core.Method{createUser, getUser, updateUser}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			before := e.state(t)
			for name, data := range map[string]map[string]json.RawMessage{
				"standard field name": {"email": raw("x@example.com")},
				"bad name":            {"has space": raw(1)},
				"not JSON":            {"role": json.RawMessage("{nope")},
			} {
				nu := e.newUser()
				nu.Data = data
				if _, err := e.a.CreateUser(e.ctx, nu); !errors.Is(err, core.ErrInvalidInput) {
					t.Errorf("createUser with %s: %v, want an error matching core.ErrInvalidInput", name, err)
				}
				if _, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Data: data}); !errors.Is(err, core.ErrInvalidInput) {
					t.Errorf("updateUser with %s: %v, want an error matching core.ErrInvalidInput", name, err)
				}
			}
			e.expectUnchanged(t, before, "rejected application fields")
		}},
		{group: userData, name: "two_instances_update_different_fields", needs: []core.Method{createUser, getUser, updateUser}, needsPeer: true, run: func(t *testing.T, e *env) {
			for round := range 10 {
				u := e.newUser()
				u.Data = fullData(u.ID)
				e.createUser(t, u)
				want := u.Normalize()
				want.Name = ptr(fmt.Sprintf("name %d", round))
				want.Data["role"] = raw(fmt.Sprintf("role %d", round))
				want.Data["level"] = raw(round)
				delete(want.Data, "beta")
				updates := []core.UserUpdate{
					{ID: u.ID, Data: map[string]json.RawMessage{"role": want.Data["role"]}},
					{ID: u.ID, Data: map[string]json.RawMessage{"level": want.Data["level"]}},
					{ID: u.ID, Name: core.Set(want.Name)},
					{ID: u.ID, Data: map[string]json.RawMessage{"beta": nil}},
				}
				throughBoth(t, e, updates, (*core.Store).UpdateUser)
				expectUser(t, fmt.Sprintf("round %d: getUser after concurrent updates of different fields through two instances", round), e.getUser(t, u.ID), want)
				if t.Failed() {
					return
				}
			}
		}},
		{group: userData, name: "fields_written_by_another_application_kept", needs: []core.Method{createUser, getUser, updateUser}, needsDataWriter: true, run: func(t *testing.T, e *env) {
			u := e.newUser()
			u.Data = map[string]json.RawMessage{"role": raw("admin")}
			e.createUser(t, u)
			other := map[string]json.RawMessage{"tenantId": raw("from-another-app"), "level": raw(9)}
			if err := e.raw.(UserDataWriter).WriteUserData(e.ctx, u.ID, other); err != nil {
				t.Fatalf("writing application fields as another application: %v", err)
			}
			want := u.Normalize()
			want.Data = core.MergeData(want.Data, other)
			expectUser(t, "getUser of fields another application wrote", e.getUser(t, u.ID), want)
			if _, err := e.a.UpdateUser(e.ctx, core.UserUpdate{ID: u.ID, Name: core.Set(ptr("Lin")), Data: map[string]json.RawMessage{"role": raw("owner")}}); err != nil {
				t.Fatal(err)
			}
			want.Name = ptr("Lin")
			want.Data["role"] = raw("owner")
			expectUser(t, "getUser after an update that names other fields", e.getUser(t, u.ID), want)
			expectEqual(t, "stored users", e.state(t).Users, []core.User{canonUser(want)})
		}},
	}
}
