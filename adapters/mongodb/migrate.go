package mongoadapter

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Migrate creates the indexes the adapter relies on:
//
//   - users: unique email;
//   - accounts: unique (provider, providerAccountId); userId;
//   - sessions: unique sessionToken; (userId, sessionToken, expires),
//     which serves the listing of a user's sessions (equality, sort,
//     range: no sort in memory) and every delete by userId; expires (TTL);
//   - verification_tokens: unique (identifier, token); expires (TTL);
//   - authenticators: unique credentialID; (userId, credentialID).
//
// It lists each collection's indexes first and creates only those missing
// (by their default names, e.g. "email_1"), so it is cheap and safe to call
// at every start-up; an existing index of the same name is kept as it is.
// A database migrated by an earlier version gains the compound sessions
// index and keeps its index userId_1 on sessions, which the compound one
// makes redundant: Migrate drops no index (an operator may drop that one).
//
// The expires indexes are TTL indexes (expireAfterSeconds 0) where the
// server supports them; where it does not, they are plain indexes, serving
// [Adapter.PurgeExpired], and Migrate does not fail.
// [Adapter.Capabilities] reports which.
//
// Without the unique indexes, duplicates other than a duplicate user id are
// not detected.
func (a *Adapter) Migrate(ctx context.Context) error {
	type index struct {
		keys   []string
		unique bool
		ttl    bool
	}
	sets := []struct {
		coll    *mongo.Collection
		indexes []index
	}{
		{a.users, []index{{keys: []string{fEmail}, unique: true}}},
		{a.accounts, []index{{keys: []string{fProvider, fProviderAccountID}, unique: true}, {keys: []string{fUserID}}}},
		{a.sessions, []index{{keys: []string{fSessionToken}, unique: true}, {keys: []string{fUserID, fSessionToken, fExpires}}, {keys: []string{fExpires}, ttl: true}}},
		{a.tokens, []index{{keys: []string{fIdentifier, fToken}, unique: true}, {keys: []string{fExpires}, ttl: true}}},
		{a.authenticators, []index{{keys: []string{fCredentialID}, unique: true}, {keys: []string{fUserID, fCredentialID}}}},
	}
	ttl := true
	for _, s := range sets {
		existing, err := listIndexes(ctx, s.coll)
		if err != nil {
			return fmt.Errorf("mongoadapter: indexes of %s: %w", s.coll.Name(), err)
		}
		var models []mongo.IndexModel
		for _, ix := range s.indexes {
			keys := make(bson.D, len(ix.keys))
			name := ""
			for i, k := range ix.keys {
				keys[i] = bson.E{Key: k, Value: 1}
				if i > 0 {
					name += "_"
				}
				name += k + "_1"
			}
			if spec, ok := existing[name]; ok {
				if ix.ttl {
					ttl = ttl && spec.ExpireAfterSeconds != nil
				}
				continue
			}
			if ix.ttl {
				ok, err := ensureExpiryIndex(ctx, s.coll, keys, name)
				if err != nil {
					return fmt.Errorf("mongoadapter: indexes of %s: %w", s.coll.Name(), err)
				}
				ttl = ttl && ok
				continue
			}
			opts := options.Index().SetName(name)
			if ix.unique {
				opts.SetUnique(true)
			}
			models = append(models, mongo.IndexModel{Keys: keys, Options: opts})
		}
		if len(models) == 0 {
			continue
		}
		if _, err := s.coll.Indexes().CreateMany(ctx, models); err != nil {
			return fmt.Errorf("mongoadapter: indexes of %s: %w", s.coll.Name(), err)
		}
	}
	a.ttl.Store(ttl)
	return nil
}

// listIndexes returns a collection's indexes by name; none for a
// collection that does not exist yet.
func listIndexes(ctx context.Context, coll *mongo.Collection) (map[string]mongo.IndexSpecification, error) {
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		var se mongo.ServerError
		if errors.As(err, &se) && se.HasErrorCode(26) { // NamespaceNotFound
			return nil, nil
		}
		return nil, err
	}
	out := make(map[string]mongo.IndexSpecification, len(specs))
	for _, sp := range specs {
		out[sp.Name] = sp
	}
	return out, nil
}

// ensureExpiryIndex creates a TTL index on expires, or a plain one where the
// server refuses TTL indexes. It reports whether the index is a TTL index.
func ensureExpiryIndex(ctx context.Context, coll *mongo.Collection, keys bson.D, name string) (bool, error) {
	_, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    keys,
		Options: options.Index().SetName(name).SetExpireAfterSeconds(0),
	})
	if err == nil {
		return true, nil
	}
	var se mongo.ServerError
	if !errors.As(err, &se) || ctx.Err() != nil {
		return false, err
	}
	// The server refused the TTL option: fall back to a plain index, which
	// serves PurgeExpired. Reads filter on expires either way.
	if _, err2 := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys, Options: options.Index().SetName(name)}); err2 != nil {
		return false, fmt.Errorf("%w (TTL index: %w)", err2, err)
	}
	return false, nil
}
