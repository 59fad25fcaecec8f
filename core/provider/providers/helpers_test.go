package providers

import (
	"errors"
	"strings"
	"testing"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

type wantProblem struct {
	index       int
	field, text string // text: a substring of the message
}

// matchProblems fails the test unless err is a *provider.ValidationError
// matching core.ErrInvalidConfig whose problems are want, in order.
func matchProblems(t *testing.T, err error, want []wantProblem) {
	t.Helper()
	var ve *provider.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, core.ErrInvalidConfig) || len(ve.Problems) != len(want) {
		t.Fatalf("got %v, want %d problems %v", err, len(want), want)
	}
	for i, w := range want {
		if g := ve.Problems[i]; g.Index != w.index || g.Field != w.field || !strings.Contains(g.Message, w.text) {
			t.Errorf("problem %d = %+v, want %+v", i, g, w)
		}
	}
}
