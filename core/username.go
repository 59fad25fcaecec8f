package core

import (
	"errors"
	"fmt"
	"strings"
)

// The bounds of a username, in bytes (every allowed character is one byte).
const (
	MinUsername = 3
	MaxUsername = 32
)

// ErrInvalidUsername is matched by the error [NormalizeUsername] returns.
var ErrInvalidUsername = errors.New("invalid username")

// NormalizeUsername returns the username as it is stored and compared:
// lowercased, so that "Alice" and "alice" are one name. A username is 3 to
// 32 of the characters a-z, 0-9, '.', '_' and '-' (letters in either case),
// beginning and ending with a letter or digit. Other scripts are refused
// rather than folded: a name that looks like another user's but is spelt
// with other code points (a Cyrillic "а" for a Latin "a") could otherwise
// stand for that user on a screen. The error matches [ErrInvalidUsername]
// and says which rule the name broke.
func NormalizeUsername(name string) (string, error) {
	if len(name) < MinUsername || len(name) > MaxUsername {
		return "", fmt.Errorf("%w: must be %d to %d characters long", ErrInvalidUsername, MinUsername, MaxUsername)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', 'A' <= c && c <= 'Z':
		case c == '.' || c == '_' || c == '-':
			if i == 0 || i == len(name)-1 {
				return "", fmt.Errorf("%w: must begin and end with a letter or digit", ErrInvalidUsername)
			}
		default:
			return "", fmt.Errorf("%w: may hold only the letters a-z, digits, '.', '_' and '-'", ErrInvalidUsername)
		}
	}
	return strings.ToLower(name), nil
}

// checkUsername returns an [*InputError] when a non-empty username is not
// in its normalised form.
func checkUsername(m Method, name string) error {
	if name == "" {
		return nil
	}
	n, err := NormalizeUsername(name)
	if err != nil {
		return invalid(string(m), "username", strings.TrimPrefix(err.Error(), ErrInvalidUsername.Error()+": "))
	}
	if n != name {
		return invalid(string(m), "username", "must be normalised (core.NormalizeUsername): "+quote(n))
	}
	return nil
}
