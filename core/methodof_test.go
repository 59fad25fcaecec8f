package core

import (
	"reflect"
	"testing"
)

// TestMethodOfMatchesTable checks MethodOf's type switch against
// methodTable, pair by pair and in both directions: every method of the
// table is named by the switch for its interface, and the switch names no
// interface the table does not pair with the same method.
func TestMethodOfMatchesTable(t *testing.T) {
	got := map[reflect.Type]Method{
		reflect.TypeFor[UserCreator]():                 MethodOf[UserCreator](),
		reflect.TypeFor[UserGetter]():                  MethodOf[UserGetter](),
		reflect.TypeFor[UserByEmailGetter]():           MethodOf[UserByEmailGetter](),
		reflect.TypeFor[UserByAccountGetter]():         MethodOf[UserByAccountGetter](),
		reflect.TypeFor[UserUpdater]():                 MethodOf[UserUpdater](),
		reflect.TypeFor[UserDeleter]():                 MethodOf[UserDeleter](),
		reflect.TypeFor[AccountLinker]():               MethodOf[AccountLinker](),
		reflect.TypeFor[AccountUnlinker]():             MethodOf[AccountUnlinker](),
		reflect.TypeFor[AccountGetter]():               MethodOf[AccountGetter](),
		reflect.TypeFor[SessionCreator]():              MethodOf[SessionCreator](),
		reflect.TypeFor[SessionAndUserGetter]():        MethodOf[SessionAndUserGetter](),
		reflect.TypeFor[SessionUpdater]():              MethodOf[SessionUpdater](),
		reflect.TypeFor[SessionDeleter]():              MethodOf[SessionDeleter](),
		reflect.TypeFor[VerificationTokenCreator]():    MethodOf[VerificationTokenCreator](),
		reflect.TypeFor[VerificationTokenUser]():       MethodOf[VerificationTokenUser](),
		reflect.TypeFor[AuthenticatorCreator]():        MethodOf[AuthenticatorCreator](),
		reflect.TypeFor[AuthenticatorGetter]():         MethodOf[AuthenticatorGetter](),
		reflect.TypeFor[AuthenticatorsByUserLister]():  MethodOf[AuthenticatorsByUserLister](),
		reflect.TypeFor[AuthenticatorCounterUpdater](): MethodOf[AuthenticatorCounterUpdater](),
	}
	table := methodTable()
	if len(table) != len(got) {
		t.Fatalf("methodTable has %d methods, the test %d: add the new one to MethodOf's switch and here", len(table), len(got))
	}
	for _, e := range table {
		if m, ok := got[e.iface]; !ok || m != e.method {
			t.Errorf("MethodOf[%v]() = %q, methodTable pairs it with %q", e.iface, m, e.method)
		}
	}
	if m := MethodOf[ExpiredPurger](); m == "" {
		t.Error("MethodOf[ExpiredPurger]() is empty: extensions are still found through extensionTable")
	}
	if m := MethodOf[error](); m != "" {
		t.Errorf("MethodOf[error]() = %q, want \"\"", m)
	}
}
