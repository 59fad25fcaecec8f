package mongoadapter

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestNextIndexAction checks what ensureOptionalUnique does after each
// answer of createIndexes and dropIndexes, including those only a real
// MongoDB gives (an index of the name with other options, a build aborted
// by another process's drop), which the FerretDB stand-in never does.
func TestNextIndexAction(t *testing.T) {
	code := func(c int32) error { return mongo.CommandError{Code: c, Message: "test"} }
	for _, c := range []struct {
		name    string
		err     error
		partial bool
		want    indexAction
	}{
		{"created", nil, true, indexDone},
		{"sparse created", nil, false, indexDone},
		{"partial not implemented", code(codeNotImplemented), true, indexSparse},
		{"partial option refused", code(codeInvalidIndexSpecificationOption), true, indexSparse},
		{"partial not supported", code(codeCommandNotSupported), true, indexSparse},
		{"sparse not implemented", code(codeNotImplemented), false, indexFail},
		{"plain index of the name", code(codeIndexOptionsConflict), true, indexDrop},
		{"other keys under the name", code(codeIndexKeySpecsConflict), true, indexDrop},
		{"plain index under the sparse one's name", code(codeIndexOptionsConflict), false, indexDrop},
		{"build aborted by a drop", code(codeIndexBuildAborted), true, indexRelist},
		{"dropped already", code(codeIndexNotFound), false, indexRelist},
		{"duplicate values", code(codeDuplicateKey), true, indexFail},
		{"not a server error", errors.New("connection reset"), true, indexFail},
	} {
		if got := nextIndexAction(c.err, c.partial); got != c.want {
			t.Errorf("%s: nextIndexAction(%v, partial %v) = %d, want %d", c.name, c.err, c.partial, got, c.want)
		}
	}
}

// TestIsOptionalUnique checks the recognition of the partial unique index
// in listIndexes' description, as MongoDB describes it.
func TestIsOptionalUnique(t *testing.T) {
	spec := func(d bson.D) bson.Raw {
		b, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	filter := bson.D{{Key: "email", Value: bson.D{{Key: "$type", Value: "string"}}}}
	base := bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "email", Value: int32(1)}}}, {Key: "name", Value: "email_1"}}
	for _, c := range []struct {
		name string
		spec bson.Raw
		want bool
	}{
		{"none", nil, false},
		{"plain unique (earlier versions)", spec(append(base, bson.E{Key: "unique", Value: true})), false},
		{"partial, not unique", spec(append(base, bson.E{Key: "partialFilterExpression", Value: filter})), false},
		{"sparse unique", spec(append(base, bson.E{Key: "unique", Value: true}, bson.E{Key: "sparse", Value: true})), false},
		{"partial over another filter", spec(append(base, bson.E{Key: "unique", Value: true},
			bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "email", Value: bson.D{{Key: "$exists", Value: true}}}}})), false},
		{"partial unique", spec(append(base, bson.E{Key: "unique", Value: true}, bson.E{Key: "partialFilterExpression", Value: filter})), true},
	} {
		if got := isOptionalUnique(c.spec, "email"); got != c.want {
			t.Errorf("%s: isOptionalUnique = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestIsSparseUnique checks which existing index Migrate keeps where the
// server has no partial indexes.
func TestIsSparseUnique(t *testing.T) {
	spec := func(d bson.D) bson.Raw {
		b, err := bson.Marshal(append(bson.D{{Key: "name", Value: "email_1"}}, d...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		name           string
		spec           bson.Raw
		uniqueIsSparse bool
		want           bool
	}{
		{"sparse unique", spec(bson.D{{Key: "unique", Value: true}, {Key: "sparse", Value: true}}), false, true},
		{"plain unique, MongoDB-like server", spec(bson.D{{Key: "unique", Value: true}}), false, false},
		{"plain unique, FerretDB", spec(bson.D{{Key: "unique", Value: true}}), true, true},
		{"not unique, FerretDB", spec(bson.D{{Key: "sparse", Value: true}}), true, false},
	} {
		if got := isSparseUnique(c.spec, c.uniqueIsSparse); got != c.want {
			t.Errorf("%s: isSparseUnique = %v, want %v", c.name, got, c.want)
		}
	}
}
