package mongoadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Server error codes that mean the input cannot be stored.
var invalidInputCodes = []int{
	2,     // BadValue
	22,    // InvalidBSON
	10334, // BSONObjectTooLarge
	17280, // KeyTooLong
}

// wrapErr maps a driver error to the core errors: [core.ErrAlreadyExists]
// for a duplicate key, [core.ErrInvalidInput] for a document the server or
// driver cannot hold, and ctx's error when ctx is done. It adds no method
// name ([core.Store] does).
func wrapErr(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%w: %w", ctxErr, err)
	}
	if mongo.IsDuplicateKeyError(err) || isStandInDuplicate(err) {
		return fmt.Errorf("%w: %w", core.ErrAlreadyExists, err)
	}
	var me mongo.MarshalError
	if errors.As(err, &me) {
		return fmt.Errorf("%w: %w", core.ErrInvalidInput, err)
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, c := range invalidInputCodes {
			if se.HasErrorCode(c) {
				return fmt.Errorf("%w: %w", core.ErrInvalidInput, err)
			}
		}
	}
	return err
}

// isStandInDuplicate recognises the error FerretDB v1 (SQLite backend)
// returns for an update that breaks a unique index: an InternalError
// carrying SQLite's message instead of MongoDB's code 11000.
func isStandInDuplicate(err error) bool {
	var se mongo.ServerError
	return errors.As(err, &se) && se.HasErrorCode(1) && se.HasErrorMessage("UNIQUE constraint failed")
}
