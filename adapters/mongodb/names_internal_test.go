package mongoadapter

import (
	"errors"
	"strings"
	"testing"

	"github.com/authport/authport/core"
)

// TestCollectionsValidateEmpty checks the one case WithCollections cannot
// produce (it keeps the default for an empty field): an empty name.
func TestCollectionsValidateEmpty(t *testing.T) {
	c := DefaultCollections()
	if err := c.validate(); err != nil {
		t.Fatalf("DefaultCollections().validate() = %v", err)
	}
	c.Accounts = ""
	err := c.validate()
	if !errors.Is(err, core.ErrInvalidInput) || !strings.Contains(err.Error(), `Accounts "" is empty`) {
		t.Errorf("validate() with an empty Accounts = %v; want an error matching ErrInvalidInput that says it is empty", err)
	}
}
