package mongoadapter_test

import (
	"encoding/json"
	"testing"

	"github.com/authport/authport/core"
)

// TestInteropUserData: fields an Auth.js application puts on its users are
// application fields (core.User.Data) on authport's side, and fields
// authport sets are fields of the user Auth.js reads; an update on either
// side keeps the fields it does not name.
func TestInteropUserData(t *testing.T) {
	f := setupInterop(t)
	a, node, ctx := f.Adapter, f.Node, t.Context()
	var nu struct {
		ID string `json:"id"`
	}
	node.Call(&nu, "createUser", map[string]any{"email": "lin@example.com", "emailVerified": nil, "name": "Lin", "image": nil,
		"role": "admin", "level": 3})
	u, err := a.GetUser(ctx, nu.ID)
	if err != nil || u == nil {
		t.Fatalf("GetUser(%q) = %v, %v", nu.ID, u, err)
	}
	if len(u.Data) != 2 || string(u.Data["role"]) != `"admin"` || string(u.Data["level"]) != `3` {
		t.Errorf("Data of a user Auth.js wrote with role and level = %s", u.Data)
	}
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: nu.ID, Data: map[string]json.RawMessage{"tenantId": json.RawMessage(`"t1"`), "level": nil}}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	node.Call(&got, "getUser", nu.ID)
	if got["role"] != "admin" || got["tenantId"] != "t1" || got["name"] != "Lin" {
		t.Errorf("Auth.js reads the user authport updated as %v, want role admin, tenantId t1, name Lin", got)
	}
	if _, ok := got["level"]; ok {
		t.Errorf("Auth.js still reads level, which authport removed: %v", got)
	}
	node.Call(nil, "updateUser", map[string]any{"id": nu.ID, "name": "Lin Yu"})
	u, err = a.GetUser(ctx, nu.ID)
	if err != nil || u == nil || u.Name == nil || *u.Name != "Lin Yu" || string(u.Data["role"]) != `"admin"` || string(u.Data["tenantId"]) != `"t1"` {
		t.Errorf("GetUser after Auth.js's updateUser of the name = %+v, %v; want the application fields kept", u, err)
	}
}
