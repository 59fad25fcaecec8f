// Package mongoadapter is an authport adapter for MongoDB, on the official
// Go driver (go.mongodb.org/mongo-driver/v2). It implements all 19 adapter
// methods of the core contract (see [core.Adapter]), [core.ExpiredPurger],
// and the session inventory ([core.SessionsByUserLister],
// [core.SessionsByUserDeleter]), keeps session metadata as fields of the
// session document ([core.SessionMetadataKeeper]), usernames
// ([core.UserByUsernameGetter]), password hashes on accounts
// ([core.PasswordHashSwapper]) and second factors ([core.FactorCreator],
// [core.FactorsByUserLister], [core.FactorSwapper], [core.FactorDeleter]).
// A user without an e-mail address or username has no such field.
//
// The adapter keeps its records in six collections of the
// [*mongo.Database] it is given: users, accounts, sessions,
// verification_tokens (the names Auth.js's MongoDB adapter uses),
// authenticators and authport_factors (which that adapter does not store);
// see [WithCollections]. Documents use Auth.js's field names
// (email, emailVerified, userId, providerAccountId, access_token,
// sessionToken, expires, identifier, credentialID, …), so a database shared
// with an Auth.js application reads the same. User ids are stored as strings,
// or as ObjectIds with [WithObjectIDs], as Auth.js writes them.
//
// With [BetterAuth] the adapter instead shares the collections of a Better
// Auth app's MongoDB adapter (user, session, account, verification) and
// writes its documents (ObjectId ids, its field names and types), so that
// each side reads and signs in what the other wrote; [Adapter.NewUserID]
// makes ObjectId user ids for it.
//
// Call [Adapter.Migrate] once at start-up: it creates the unique indexes
// (partial over the users that have one, for e-mail addresses and
// usernames) that make duplicate e-mails, usernames, accounts, session tokens, verification tokens
// and credential ids fail with [core.ErrAlreadyExists], and TTL indexes that
// let the server expire sessions and tokens where it supports them.
//
// [New] asks the server once what it supports and picks the cheapest way to
// do each operation: a $lookup aggregation (one round trip) for
// getSessionAndUser and getUserByAccount where the server has $lookup, two
// finds otherwise; a transaction for deleteUser on a replica set or sharded
// cluster, ordered deletes otherwise. An expired session or verification
// token is never returned, whatever the TTL monitor's lag: every read of one
// filters on expires > now.
package mongoadapter
