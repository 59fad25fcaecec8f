package mongoadapter_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/authport/authport/conformance"
	"github.com/authport/authport/core"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// baSkips are the conformance rules that cannot hold with BetterAuth
// (conformance.Harness.Skip: a group, or <group>/<rule>), with the reason.
var baSkips = map[string]string{
	"optionalEmail":                         "Better Auth requires an e-mail address of every user: BetterAuth refuses a user without one (TestBetterAuthRefusesNoEmail)",
	"passwordFlow/usernames_sign_up_and_in": "signs up a user with a username and no e-mail address, which Better Auth cannot hold (TestBetterAuthRefusesNoEmail)",
	"passwordFlow/oauth_user_without_email": "signs in an OAuth user whose profile has no e-mail address, which Better Auth cannot hold (TestBetterAuthRefusesNoEmail)",
}

// baGroups are the rule groups whose records BetterAuth stores otherwise:
// users, accounts, sessions and verification tokens, and the flows over
// them. The others (authenticators and second factors, which stay in
// authport's collections as without the option; deleteUserRace, whose
// ordering is the same code; lostReply, which needs a lossy peer) are
// TestConformance's.
var baGroups = []string{"createUser", "getUser", "getUserByEmail", "getUserByAccount", "updateUser", "deleteUser",
	"optionalEmail", "usernames", "userData", "linkAccount", "unlinkAccount", "getAccount", "passwordHashes",
	"listAccountsByUserId", "updateAccount", "createSession", "getSessionAndUser", "updateSession", "deleteSession",
	"extendSession", "sessionLifetime", "listSessionsByUserId", "deleteSessionsByUserId", "sessionMetadata",
	"createVerificationToken", "useVerificationToken", "purgeExpired", "cutShort", "emailSignIn", "oauthSignIn",
	"accounts", "sessionInventory", "tokenFamilies", "passwordFlow"}

// TestConformanceBetterAuth runs the suite's groups of users, accounts,
// sessions and verification tokens (baGroups) on Better Auth's collections
// (mongoadapter.BetterAuth), with a raw view that reads Better Auth's
// documents with the driver alone; the rules that cannot hold there
// (baSkips) skip with their reason.
func TestConformanceBetterAuth(t *testing.T) {
	s := newServer(t, nil)
	conformance.Run(t, conformance.Harness{Name: "mongodb_betterauth", Groups: baGroups, Skip: baSkips, New: func(t testing.TB) conformance.Fixture {
		a, db := newAdapter(t, s, mongoadapter.BetterAuth())
		return conformance.Fixture{Adapter: a, Raw: baRawView{rawView{db: db, names: a.Collections()}},
			Peer: peerOn(db, mongoadapter.BetterAuth())}
	}})
}

// baRawView reads Better Auth's documents (mongoadapter.BetterAuth) with the
// driver alone: every document has an ObjectId _id; users, accounts and
// verification values have createdAt and updatedAt dates.
type baRawView struct{ rawView }

// stamps checks that the document has an ObjectId _id and, when dates,
// createdAt and updatedAt dates.
func stamps(f *field, dates bool) {
	f.value("_id", bson.TypeObjectID)
	if dates {
		f.time("createdAt")
		f.time("updatedAt")
	}
}

func (r baRawView) Users(ctx context.Context) ([]core.User, error) {
	return records(ctx, r.rawView, r.names.Users, func(f *field) (core.User, error) {
		u := core.User{ID: f.id("_id"), Email: f.str("email"), Username: f.absentStr("username"), Image: f.nullStr("image")}
		if name := f.str("name"); name != "" {
			u.Name = &name
		}
		if f.bool("emailVerified") {
			t := time.Unix(0, 0).UTC()
			if _, err := f.doc.LookupErr("emailVerifiedAt"); err == nil {
				t = f.time("emailVerifiedAt")
			}
			u.EmailVerified = &t
		}
		f.time("createdAt")
		f.time("updatedAt")
		if f.err != nil {
			return u, f.err
		}
		data, err := otherFields(f.doc)
		for _, k := range []string{"createdAt", "updatedAt", "emailVerifiedAt"} {
			delete(data, k)
		}
		if len(data) == 0 {
			data = nil
		}
		u.Data = data
		return u, err
	})
}

func (r baRawView) Accounts(ctx context.Context) ([]core.Account, error) {
	return records(ctx, r.rawView, r.names.Accounts, func(f *field) (core.Account, error) {
		stamps(f, true)
		acc := core.Account{
			UserID: f.id("userId"), Provider: f.str("providerId"), Type: core.AccountType(f.str("type")),
			ProviderAccountID: f.str("accountId"), AccessToken: f.nullStr("accessToken"),
			IDToken: f.nullStr("idToken"), RefreshToken: f.nullStr("refreshToken"), Scope: f.nullStr("scope"),
			PasswordHash: f.optStr("password"),
		}
		if t := f.nullTime("accessTokenExpiresAt"); t != nil {
			sec := t.Unix()
			acc.ExpiresAt = &sec
		}
		if _, err := f.doc.LookupErr("expiresIn"); err == nil {
			n := f.int64("expiresIn")
			acc.ExpiresIn = &n
		}
		acc.TokenType, acc.SessionState = presentStr(f, "tokenType"), presentStr(f, "sessionState")
		if v, err := f.doc.LookupErr("authorizationDetails"); err == nil {
			vals, err := v.Array().Values()
			if err != nil {
				return acc, err
			}
			acc.AuthorizationDetails = []core.AuthorizationDetail{}
			for _, e := range vals {
				df := field{doc: e.Document()}
				acc.AuthorizationDetails = append(acc.AuthorizationDetails, core.AuthorizationDetail{
					Type: df.str("type"), Locations: df.strings("locations"), Actions: df.strings("actions"),
					Datatypes: df.strings("datatypes"), Identifier: df.str("identifier"), Privileges: df.strings("privileges"),
				})
				if df.err != nil {
					return acc, df.err
				}
			}
		}
		return acc, nil
	})
}

// WriteAccount inserts the account as Better Auth's adapter would, with
// authport's own fields beside (conformance.RawWriter): as given, not
// normalized.
func (r baRawView) WriteAccount(ctx context.Context, a core.Account) error {
	uid := any(a.UserID)
	if oid, err := bson.ObjectIDFromHex(a.UserID); err == nil && len(a.UserID) == 24 && strings.ToLower(a.UserID) == a.UserID {
		uid = oid
	}
	var exp any
	if a.ExpiresAt != nil {
		exp = time.Unix(*a.ExpiresAt, 0)
	}
	now := time.Now()
	doc := bson.D{
		{Key: "_id", Value: bson.NewObjectID()}, {Key: "accountId", Value: a.ProviderAccountID},
		{Key: "providerId", Value: a.Provider}, {Key: "userId", Value: uid},
		{Key: "accessToken", Value: a.AccessToken}, {Key: "refreshToken", Value: a.RefreshToken},
		{Key: "idToken", Value: a.IDToken}, {Key: "accessTokenExpiresAt", Value: exp}, {Key: "scope", Value: a.Scope},
		{Key: "createdAt", Value: now}, {Key: "updatedAt", Value: now}, {Key: "type", Value: string(a.Type)},
	}
	if a.PasswordHash != nil {
		doc = append(doc, bson.E{Key: "password", Value: *a.PasswordHash})
	}
	if a.ExpiresIn != nil {
		doc = append(doc, bson.E{Key: "expiresIn", Value: *a.ExpiresIn})
	}
	if a.TokenType != nil {
		doc = append(doc, bson.E{Key: "tokenType", Value: *a.TokenType})
	}
	if a.SessionState != nil {
		doc = append(doc, bson.E{Key: "sessionState", Value: *a.SessionState})
	}
	if a.AuthorizationDetails != nil {
		arr := bson.A{}
		for _, d := range a.AuthorizationDetails {
			det := bson.D{{Key: "type", Value: d.Type}}
			for _, l := range []struct {
				k string
				v []string
			}{{"locations", d.Locations}, {"actions", d.Actions}, {"datatypes", d.Datatypes}} {
				if l.v != nil {
					det = append(det, bson.E{Key: l.k, Value: l.v})
				}
			}
			det = append(det, bson.E{Key: "identifier", Value: d.Identifier})
			if d.Privileges != nil {
				det = append(det, bson.E{Key: "privileges", Value: d.Privileges})
			}
			arr = append(arr, det)
		}
		doc = append(doc, bson.E{Key: "authorizationDetails", Value: arr})
	}
	_, err := r.db.Collection(r.names.Accounts).InsertOne(ctx, doc)
	return err
}

// Sessions reads Better Auth's sessions: token, expiresAt, and the
// metadata, absent when unknown.
func (r baRawView) Sessions(ctx context.Context) ([]core.Session, error) {
	return records(ctx, r.rawView, r.names.Sessions, func(f *field) (core.Session, error) {
		stamps(f, false)
		return core.Session{
			SessionToken: f.str("token"), UserID: f.id("userId"), Expires: f.time("expiresAt"),
			CreatedAt: absent(f, "createdAt", bson.TypeDateTime, dateTime), UpdatedAt: absent(f, "updatedAt", bson.TypeDateTime, dateTime),
			IPAddress: absent(f, "ipAddress", bson.TypeString, bson.RawValue.StringValue),
			UserAgent: absent(f, "userAgent", bson.TypeString, bson.RawValue.StringValue),
		}, nil
	})
}

// VerificationTokens reads Better Auth's verification values: identifier,
// value (the token), expiresAt.
func (r baRawView) VerificationTokens(ctx context.Context) ([]core.VerificationToken, error) {
	return records(ctx, r.rawView, r.names.VerificationTokens, func(f *field) (core.VerificationToken, error) {
		stamps(f, true)
		return core.VerificationToken{Identifier: f.str("identifier"), Token: f.str("value"), Expires: f.time("expiresAt")}, nil
	})
}

var _ conformance.RawWriter = baRawView{}
var _ conformance.UserDataWriter = baRawView{}
var _ conformance.FactorRaw = baRawView{}

// presentStr reads a string field absent for nil ("" when stored "").
func presentStr(f *field, name string) *string {
	if _, err := f.doc.LookupErr(name); err != nil {
		return nil
	}
	s := f.str(name)
	return &s
}
