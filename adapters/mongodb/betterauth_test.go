package mongoadapter_test

import (
	"encoding/json"
	"errors"
	"regexp"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/authport/authport/core"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// TestBetterAuthRefusesNoEmail: with BetterAuth a user without an e-mail
// address is refused (Better Auth requires one), on create and on an update
// that removes it, and nothing is written.
func TestBetterAuthRefusesNoEmail(t *testing.T) {
	a, db := newAdapter(t, newServer(t, nil), mongoadapter.BetterAuth())
	ctx := t.Context()
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Username: "ada"}); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("CreateUser without an address: %v, want ErrInvalidInput", err)
	}
	if n, err := db.Collection("user").CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Errorf("users after the refused create: %d, %v", n, err)
	}
	if _, err := a.CreateUser(ctx, core.User{ID: "u", Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: "u", Email: core.Set("")}); !errors.Is(err, core.ErrInvalidInput) {
		t.Errorf("UpdateUser removing the address: %v, want ErrInvalidInput", err)
	}
	if u, err := a.GetUserByEmail(ctx, "ada@example.com"); err != nil || u == nil || u.ID != "u" {
		t.Errorf("the user after the refused update: %+v, %v", u, err)
	}
}

// TestBetterAuthDocuments: what BetterAuth writes is what Better Auth's
// mongodbAdapter writes: ObjectId ids (for a user id in ObjectId hex) and
// userIds, its field names and types, createdAt and updatedAt; and
// authport's own fields beside, which Better Auth ignores.
func TestBetterAuthDocuments(t *testing.T) {
	now := time.Date(2031, 3, 14, 15, 9, 26, 0, time.UTC)
	a, db := newAdapter(t, newServer(t, nil), mongoadapter.BetterAuth(), mongoadapter.WithClock(func() time.Time { return now }))
	ctx := t.Context()
	r := rawView{db: db, names: a.Collections()}
	only := func(coll string) bson.Raw {
		t.Helper()
		docs, err := r.all(ctx, coll)
		if err != nil || len(docs) != 1 {
			t.Fatalf("%s: %d documents, %v; want 1", coll, len(docs), err)
		}
		return docs[0]
	}
	want := func(doc bson.Raw, field string, typ bson.Type, v any) {
		t.Helper()
		got, err := doc.LookupErr(field)
		if err != nil || got.Type != typ {
			t.Errorf("%s: %v (%v); want BSON type %v", field, got, err, typ)
			return
		}
		if v == nil {
			return
		}
		b, _ := bson.Marshal(bson.D{{Key: "v", Value: v}})
		if w := bson.Raw(b).Lookup("v"); !got.Equal(w) {
			t.Errorf("%s: %v, want %v", field, got, w)
		}
	}
	none := func(doc bson.Raw, fields ...string) {
		t.Helper()
		for _, f := range fields {
			if _, err := doc.LookupErr(f); err == nil {
				t.Errorf("%s is stored: %s", f, doc)
			}
		}
	}

	id, err := a.NewUserID(ctx)
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(id) {
		t.Fatalf("NewUserID = %q, %v; want an ObjectId's hex", id, err)
	}
	oid, _ := bson.ObjectIDFromHex(id)
	verified := now.Add(-time.Hour)
	if _, err := a.CreateUser(ctx, core.User{ID: id, Email: "ada@example.com", EmailVerified: &verified,
		Data: map[string]json.RawMessage{"role": json.RawMessage(`"admin"`)}}); err != nil {
		t.Fatal(err)
	}
	u := only("user")
	want(u, "_id", bson.TypeObjectID, oid)
	want(u, "email", bson.TypeString, "ada@example.com")
	want(u, "emailVerified", bson.TypeBoolean, true)
	want(u, "emailVerifiedAt", bson.TypeDateTime, bson.NewDateTimeFromTime(verified))
	want(u, "name", bson.TypeString, "")
	want(u, "image", bson.TypeNull, nil)
	want(u, "createdAt", bson.TypeDateTime, bson.NewDateTimeFromTime(now))
	want(u, "updatedAt", bson.TypeDateTime, bson.NewDateTimeFromTime(now))
	want(u, "role", bson.TypeString, "admin")
	if got, err := a.GetUserByEmail(ctx, "ada@example.com"); err != nil || got == nil || got.Name != nil || got.Email != "ada@example.com" ||
		got.EmailVerified == nil || !got.EmailVerified.Equal(verified) || string(got.Data["role"]) != `"admin"` || len(got.Data) != 1 {
		t.Errorf("GetUserByEmail = %+v, %v", got, err)
	}
	later := now.Add(time.Minute)
	now = later
	if _, err := a.UpdateUser(ctx, core.UserUpdate{ID: id, EmailVerified: core.Set[*time.Time](nil)}); err != nil {
		t.Fatal(err)
	}
	u = only("user")
	want(u, "emailVerified", bson.TypeBoolean, false)
	none(u, "emailVerifiedAt")
	want(u, "updatedAt", bson.TypeDateTime, bson.NewDateTimeFromTime(later))
	want(u, "createdAt", bson.TypeDateTime, bson.NewDateTimeFromTime(later.Add(-time.Minute)))

	exp := now.Add(24 * time.Hour)
	if _, err := a.CreateSession(ctx, core.Session{SessionToken: "tok", UserID: id, Expires: exp, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	s := only("session")
	want(s, "_id", bson.TypeObjectID, nil)
	want(s, "token", bson.TypeString, "tok")
	want(s, "userId", bson.TypeObjectID, oid)
	want(s, "expiresAt", bson.TypeDateTime, bson.NewDateTimeFromTime(exp))
	want(s, "createdAt", bson.TypeDateTime, bson.NewDateTimeFromTime(now))
	none(s, "sessionToken", "expires")

	expiresAt, expiresIn := now.Unix()+3600, int64(3600)
	if _, err := a.LinkAccount(ctx, core.Account{UserID: id, Provider: "github", Type: core.AccountTypeOAuth, ProviderAccountID: "gh-1",
		AccessToken: baPtr("at"), ExpiresAt: &expiresAt, ExpiresIn: &expiresIn, TokenType: baPtr("Bearer")}); err != nil {
		t.Fatal(err)
	}
	acc := only("account")
	want(acc, "_id", bson.TypeObjectID, nil)
	want(acc, "providerId", bson.TypeString, "github")
	want(acc, "accountId", bson.TypeString, "gh-1")
	want(acc, "userId", bson.TypeObjectID, oid)
	want(acc, "accessToken", bson.TypeString, "at")
	want(acc, "accessTokenExpiresAt", bson.TypeDateTime, bson.DateTime(expiresAt*1000))
	want(acc, "type", bson.TypeString, "oauth")
	want(acc, "expiresIn", bson.TypeInt64, expiresIn)
	want(acc, "tokenType", bson.TypeString, "bearer")
	want(acc, "createdAt", bson.TypeDateTime, bson.NewDateTimeFromTime(now))
	none(acc, "provider", "providerAccountId", "access_token", "expires_at", "sessionState", "authorizationDetails")

	if _, err := a.CreateVerificationToken(ctx, core.VerificationToken{Identifier: "ada@example.com", Token: "h", Expires: exp}); err != nil {
		t.Fatal(err)
	}
	v := only("verification")
	want(v, "_id", bson.TypeObjectID, nil)
	want(v, "value", bson.TypeString, "h")
	want(v, "expiresAt", bson.TypeDateTime, bson.NewDateTimeFromTime(exp))
	want(v, "createdAt", bson.TypeDateTime, bson.NewDateTimeFromTime(now))
	none(v, "token", "expires")

	// A user id that is not an ObjectId's lowercase hex stays a string.
	for _, sid := range []string{"user-1", "ABCDEF0123456789ABCDEF01"} {
		if _, err := a.CreateUser(ctx, core.User{ID: sid, Email: sid + "@example.com"}); err != nil {
			t.Fatal(err)
		}
		if n, err := db.Collection("user").CountDocuments(ctx, bson.D{{Key: "_id", Value: sid}}); err != nil || n != 1 {
			t.Errorf("user %q stored as a string: %d, %v", sid, n, err)
		}
	}
}

// TestBetterAuthReadsItsDocuments: documents as Better Auth's mongodbAdapter
// writes them (without authport's fields) read as authport's records:
// emailVerified true as the epoch, a name of "" as none, an account's type
// derived, accessTokenExpiresAt in seconds; createdAt and updatedAt are no
// application fields, a plugin's field (twoFactorEnabled) is one.
func TestBetterAuthReadsItsDocuments(t *testing.T) {
	a, db := newAdapter(t, newServer(t, nil), mongoadapter.BetterAuth())
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	oid := bson.NewObjectID()
	insert := func(coll string, doc bson.D) {
		t.Helper()
		if _, err := db.Collection(coll).InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	insert("user", bson.D{{Key: "_id", Value: oid}, {Key: "name", Value: ""}, {Key: "email", Value: "ba@example.com"},
		{Key: "emailVerified", Value: true}, {Key: "image", Value: nil}, {Key: "createdAt", Value: now}, {Key: "updatedAt", Value: now},
		{Key: "twoFactorEnabled", Value: false}})
	u, err := a.GetUser(ctx, oid.Hex())
	if err != nil || u == nil || u.Name != nil || u.EmailVerified == nil || !u.EmailVerified.Equal(time.Unix(0, 0)) ||
		len(u.Data) != 1 || string(u.Data["twoFactorEnabled"]) != "false" {
		t.Errorf("GetUser of Better Auth's user = %+v, %v", u, err)
	}
	ms := now.Add(time.Hour).Add(789 * time.Millisecond)
	insert("account", bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "accountId", Value: oid.Hex()}, {Key: "providerId", Value: "credential"},
		{Key: "userId", Value: oid}, {Key: "password", Value: "salt:key"}, {Key: "createdAt", Value: now}, {Key: "updatedAt", Value: now}})
	insert("account", bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "accountId", Value: "g-1"}, {Key: "providerId", Value: "google"},
		{Key: "userId", Value: oid}, {Key: "accessToken", Value: "at"}, {Key: "idToken", Value: "it"}, {Key: "accessTokenExpiresAt", Value: ms},
		{Key: "refreshTokenExpiresAt", Value: ms}, {Key: "scope", Value: "openid"}, {Key: "createdAt", Value: now}, {Key: "updatedAt", Value: now}})
	accs, err := a.ListAccountsByUserID(ctx, oid.Hex())
	if err != nil || len(accs) != 2 {
		t.Fatalf("ListAccountsByUserID = %+v, %v", accs, err)
	}
	if c := accs[0]; c.Provider != core.PasswordProvider || c.Type != core.AccountTypeCredentials || c.ProviderAccountID != oid.Hex() ||
		c.PasswordHash == nil || *c.PasswordHash != "salt:key" || c.UserID != oid.Hex() {
		t.Errorf("Better Auth's password account reads as %+v", c)
	}
	if g := accs[1]; g.Type != core.AccountTypeOAuth || g.AccessToken == nil || *g.AccessToken != "at" || g.IDToken == nil ||
		g.ExpiresAt == nil || *g.ExpiresAt != ms.Unix() || g.ExpiresIn != nil || g.TokenType != nil || g.Scope == nil {
		t.Errorf("Better Auth's OAuth account reads as %+v", g)
	}
	if got, err := a.GetUserByAccount(ctx, core.AccountKey{Provider: "google", ProviderAccountID: "g-1"}); err != nil || got == nil || got.ID != oid.Hex() {
		t.Errorf("GetUserByAccount = %+v, %v", got, err)
	}
	exp := now.Add(time.Hour)
	insert("session", bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "expiresAt", Value: exp}, {Key: "token", Value: "ba-tok"},
		{Key: "createdAt", Value: now}, {Key: "updatedAt", Value: now}, {Key: "ipAddress", Value: ""}, {Key: "userAgent", Value: "UA"}, {Key: "userId", Value: oid}})
	su, err := a.GetSessionAndUser(ctx, "ba-tok")
	if err != nil || su == nil || su.User.ID != oid.Hex() || !su.Session.Expires.Equal(exp) || su.Session.UserID != oid.Hex() {
		t.Errorf("GetSessionAndUser of Better Auth's session = %+v, %v", su, err)
	}
	if list, err := a.ListSessionsByUserID(ctx, oid.Hex()); err != nil || len(list) != 1 || !list[0].CreatedAt.Equal(now) || list[0].UserAgent != "UA" {
		t.Errorf("ListSessionsByUserID = %+v, %v", list, err)
	}
	insert("verification", bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "identifier", Value: "reset-password:x"}, {Key: "value", Value: oid.Hex()},
		{Key: "expiresAt", Value: exp}, {Key: "createdAt", Value: now}, {Key: "updatedAt", Value: now}})
	if v, err := a.UseVerificationToken(ctx, core.VerificationTokenKey{Identifier: "reset-password:x", Token: oid.Hex()}); err != nil || v == nil || !v.Expires.Equal(exp) {
		t.Errorf("UseVerificationToken of Better Auth's value = %+v, %v", v, err)
	}
	if n, err := db.Collection("verification").CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Errorf("verification values left after use: %d, %v", n, err)
	}
	if _, err := a.DeleteUser(ctx, oid.Hex()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"user", "account", "session"} {
		if n, err := db.Collection(c).CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
			t.Errorf("%s documents left after DeleteUser: %d, %v", c, n, err)
		}
	}
}

// TestNewUserIDWithoutBetterAuth: without BetterAuth or WithObjectIDs,
// NewUserID makes a UUID, authport's default.
func TestNewUserIDWithoutBetterAuth(t *testing.T) {
	a, _ := newAdapter(t, newServer(t, nil))
	id, err := a.NewUserID(t.Context())
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
		t.Errorf("NewUserID = %q, %v; want a random UUID", id, err)
	}
}

func baPtr[T any](v T) *T { return &v }
