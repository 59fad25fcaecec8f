package mongoadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Migrate creates the indexes the adapter relies on:
//
//   - users: unique email and unique username, each over the users that
//     have one (see below);
//   - accounts: unique (provider, providerAccountId); userId;
//   - sessions: unique sessionToken; (userId, sessionToken, expires),
//     which serves the listing of a user's sessions (equality, sort,
//     range: no sort in memory) and every delete by userId; expires (TTL);
//   - verification_tokens: unique (identifier, token); expires (TTL);
//   - authenticators: unique credentialID; (userId, credentialID);
//   - authport_factors: (userId, _id), which serves the sorted listing of
//     a user's factors and deleteUser's delete by userId (the _id, the
//     factor id, is unique by itself).
//
// It lists each collection's indexes first and creates only those missing
// (by their default names, e.g. "email_1"), so it is cheap and safe to call
// at every start-up; an existing index of the same name is kept as it is,
// but for email_1 and username_1 below. A database migrated by an earlier
// version gains the compound sessions index and keeps its index userId_1
// on sessions, which the compound one makes redundant (an operator may drop
// that one).
//
// email_1 and username_1 are unique indexes with the partial filter
// {field: {$type: "string"}}: users without an address or username (an
// absent field, or null as Auth.js writes it) are not indexed, so any
// number of them coexist. An existing email_1 of another kind (the plain
// unique index earlier versions made, which lets only one user be without
// an address) is dropped and created again as the partial one. That is
// safe to run twice and from several processes at once: each attempt
// starts from the indexes as listed, a drop of an index already gone and
// a build aborted by another process's drop are retried, and creating an
// index that exists as wanted changes nothing. Between the drop and the
// creation addresses are not checked for uniqueness; should two users get
// one address meanwhile, the creation fails with an error that says so.
// Where the server refuses partial indexes (FerretDB v1), both are sparse
// unique indexes instead; [Capabilities.PartialIndexes] says which, and
// what differs.
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
		// optional: unique among the documents where the one key is a
		// string (ensureOptionalUnique).
		optional bool
	}
	f := a.f
	emailIndex := index{keys: []string{fEmail}, optional: true}
	if a.ba {
		// Every user has an address (Better Auth's own index is a plain
		// unique one too).
		emailIndex = index{keys: []string{fEmail}, unique: true}
	}
	sets := []struct {
		coll    *mongo.Collection
		indexes []index
	}{
		{a.users, []index{emailIndex, {keys: []string{fUsername}, optional: true}}},
		{a.accounts, []index{{keys: []string{f.provider, f.providerAccountID}, unique: true}, {keys: []string{fUserID}}}},
		{a.sessions, []index{{keys: []string{f.sessionToken}, unique: true}, {keys: []string{fUserID, f.sessionToken, f.expires}}, {keys: []string{f.expires}, ttl: true}}},
		{a.tokens, []index{{keys: []string{fIdentifier, f.token}, unique: true}, {keys: []string{f.expires}, ttl: true}}},
		{a.authenticators, []index{{keys: []string{fCredentialID}, unique: true}, {keys: []string{fUserID, fCredentialID}}}},
		{a.factors, []index{{keys: []string{fUserID, fID}}}},
	}
	ttl, partial := true, true
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
			if ix.optional {
				// FerretDB (the one server whose findAndModify is not
				// atomic) leaves documents without the field out of
				// every unique index, sparse or not.
				p, err := ensureOptionalUnique(ctx, s.coll, ix.keys[0], name, existing[name], !a.atomicFAM)
				if err != nil {
					return fmt.Errorf("mongoadapter: indexes of %s: %w", s.coll.Name(), err)
				}
				partial = partial && p
				continue
			}
			if a.ba && !ix.ttl && sameKeyIndex(existing, keys, ix.unique) {
				// Better Auth made it under its own name.
				continue
			}
			if spec, ok := existing[name]; ok {
				if ix.ttl {
					_, err := spec.LookupErr("expireAfterSeconds")
					ttl = ttl && err == nil
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
	a.partial.Store(partial)
	return nil
}

// sameKeyIndex reports whether one of the indexes listed has the keys
// given, is unique when unique is (and not partial when it is), as Better
// Auth's mongodbAdapter creates indexes under names of its own.
func sameKeyIndex(existing map[string]bson.Raw, keys bson.D, unique bool) bool {
	want, err := bson.Marshal(keys)
	if err != nil {
		return false
	}
	for _, spec := range existing {
		k, ok := spec.Lookup("key").DocumentOK()
		if !ok || !sameKeys(k, want) {
			continue
		}
		u, _ := spec.Lookup("unique").BooleanOK()
		_, partial := spec.Lookup("partialFilterExpression").DocumentOK()
		if !unique || (u && !partial) {
			return true
		}
	}
	return false
}

// sameKeys reports whether two index key documents name the same fields in
// the same order, each ascending (1, of whichever numeric type).
func sameKeys(got, want bson.Raw) bool {
	ge, err1 := got.Elements()
	we, err2 := want.Elements()
	if err1 != nil || err2 != nil || len(ge) != len(we) {
		return false
	}
	for i := range ge {
		if ge[i].Key() != we[i].Key() {
			return false
		}
		if n, ok := ge[i].Value().AsInt64OK(); !ok || n != 1 {
			if f, ok := ge[i].Value().DoubleOK(); !ok || f != 1 {
				return false
			}
		}
	}
	return true
}

// Server error codes Migrate acts on.
const (
	codeIndexNotFound                   = 27
	codeIndexOptionsConflict            = 85
	codeIndexKeySpecsConflict           = 86
	codeCommandNotSupported             = 115
	codeInvalidIndexSpecificationOption = 197
	codeNotImplemented                  = 238
	codeIndexBuildAborted               = 276
	codeDuplicateKey                    = 11000
)

// maxIndexAttempts bounds the attempts of ensureOptionalUnique, each of
// which another process's Migrate can undo at most once.
const maxIndexAttempts = 8

// indexAction is what ensureOptionalUnique does after an attempt.
type indexAction int

const (
	indexDone   indexAction = iota // the index is as wanted
	indexSparse                    // partial refused: try a sparse one
	indexDrop                      // another index has the name: drop it, list, try again
	indexRelist                    // changed by another process: list, try again
	indexFail                      // return the error
)

// nextIndexAction decides, from the error of creating the index (partial
// or not), what ensureOptionalUnique does next.
func nextIndexAction(err error, partial bool) indexAction {
	if err == nil {
		// createIndexes succeeds only when an index of that name and
		// those options exists afterwards.
		return indexDone
	}
	var se mongo.ServerError
	if !errors.As(err, &se) {
		return indexFail
	}
	switch {
	case partial && (se.HasErrorCode(codeNotImplemented) || se.HasErrorCode(codeCommandNotSupported) ||
		se.HasErrorCode(codeInvalidIndexSpecificationOption)):
		return indexSparse
	case se.HasErrorCode(codeIndexOptionsConflict) || se.HasErrorCode(codeIndexKeySpecsConflict):
		return indexDrop
	case se.HasErrorCode(codeIndexBuildAborted) || se.HasErrorCode(codeIndexNotFound):
		return indexRelist
	}
	return indexFail
}

// optionalFilter is the partial filter of the unique index of an optional
// field: the documents where it is a string.
func optionalFilter(field string) bson.D {
	return bson.D{{Key: field, Value: bson.D{{Key: "$type", Value: "string"}}}}
}

// isOptionalUnique reports whether an index (as listIndexes describes it)
// is the partial unique index of field.
func isOptionalUnique(spec bson.Raw, field string) bool {
	if spec == nil {
		return false
	}
	if u, ok := spec.Lookup("unique").BooleanOK(); !ok || !u {
		return false
	}
	pf, ok := spec.Lookup("partialFilterExpression").DocumentOK()
	if !ok {
		return false
	}
	want, err := bson.Marshal(optionalFilter(field))
	return err == nil && bytes.Equal(pf, want)
}

// isSparseUnique reports whether an index (as listIndexes describes it)
// is unique and leaves out the documents without its field: sparse, or on
// a server whose unique indexes all do (uniqueIsSparse).
func isSparseUnique(spec bson.Raw, uniqueIsSparse bool) bool {
	if u, ok := spec.Lookup("unique").BooleanOK(); !ok || !u {
		return false
	}
	sparse, _ := spec.Lookup("sparse").BooleanOK()
	return sparse || uniqueIsSparse
}

// ensureOptionalUnique makes the index name on field the unique index of
// the documents where field is a string, replacing an index of another
// kind with that name (spec, as listed; nil when there is none). It
// reports whether the index is partial: where the server refuses partial
// indexes it is a sparse unique index (see [Capabilities.PartialIndexes]),
// and an existing unique index is kept when it is sparse or when
// uniqueIsSparse says the server's unique indexes all leave out documents
// without the field (FerretDB v1, which ignores the sparse option, does not
// report it, and can drop the connection of a createIndexes of an index
// that exists).
func ensureOptionalUnique(ctx context.Context, coll *mongo.Collection, field, name string, spec bson.Raw, uniqueIsSparse bool) (bool, error) {
	partial := true
	for attempt := 0; attempt < maxIndexAttempts; attempt++ {
		if partial && isOptionalUnique(spec, field) {
			return true, nil
		}
		if !partial && spec != nil && isSparseUnique(spec, uniqueIsSparse) {
			return false, nil
		}
		opts := options.Index().SetName(name).SetUnique(true)
		if partial {
			opts.SetPartialFilterExpression(optionalFilter(field))
		} else {
			opts.SetSparse(true)
		}
		_, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: field, Value: 1}}, Options: opts})
		switch nextIndexAction(err, partial) {
		case indexDone:
			return partial, nil
		case indexSparse:
			partial = false
			continue
		case indexDrop:
			if err := coll.Indexes().DropOne(ctx, name); nextIndexAction(err, false) == indexFail {
				return false, fmt.Errorf("replacing index %s: %w", name, err)
			}
		case indexRelist:
		default:
			var se mongo.ServerError
			if errors.As(err, &se) && se.HasErrorCode(codeDuplicateKey) {
				return false, fmt.Errorf("index %s: users share a value of %s: give them distinct ones (or remove it), then run Migrate again: %w", name, field, err)
			}
			return false, fmt.Errorf("index %s: %w", name, err)
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		var err2 error
		if spec, err2 = indexSpec(ctx, coll, name); err2 != nil {
			return false, err2
		}
	}
	return false, fmt.Errorf("index %s kept changing while Migrate ran %d times (another process replacing it?): run Migrate again", name, maxIndexAttempts)
}

// indexSpec returns the index name of coll as listIndexes describes it, or
// nil when there is none.
func indexSpec(ctx context.Context, coll *mongo.Collection, name string) (bson.Raw, error) {
	specs, err := listIndexes(ctx, coll)
	if err != nil {
		return nil, fmt.Errorf("indexes of %s: %w", coll.Name(), err)
	}
	return specs[name], nil
}

// listIndexes returns a collection's indexes by name, as listIndexes
// describes them; none for a collection that does not exist yet.
func listIndexes(ctx context.Context, coll *mongo.Collection) (map[string]bson.Raw, error) {
	cur, err := coll.Indexes().List(ctx)
	if err != nil {
		var se mongo.ServerError
		if errors.As(err, &se) && se.HasErrorCode(26) { // NamespaceNotFound
			return nil, nil
		}
		return nil, err
	}
	var specs []bson.Raw
	if err := cur.All(ctx, &specs); err != nil {
		return nil, err
	}
	out := make(map[string]bson.Raw, len(specs))
	for _, sp := range specs {
		if name, ok := sp.Lookup("name").StringValueOK(); ok {
			out[name] = sp
		}
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
