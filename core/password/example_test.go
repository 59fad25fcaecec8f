package password_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/authport/authport/core/password"
)

// A sign-up checks the password against the policy and stores Hash of its
// normalised form; a sign-in normalises what was typed the same way and
// verifies it, re-hashing when Verify says so.
func Example() {
	ctx := context.Background()
	// Production uses password.RFC9106Params(); these are small to keep
	// the example fast.
	hasher, err := password.NewArgon2id(password.Argon2idParams{
		Memory: 1024, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32,
	})
	if err != nil {
		panic(err)
	}
	policy := password.Policy{} // 8 to 128 characters

	// Sign-up.
	if err := policy.Validate(ctx, "short"); errors.Is(err, password.ErrTooShort) {
		fmt.Println("refused:", err)
	}
	chosen := "cafe\u0301 au lait" // "café au lait", e and a combining accent
	if err := policy.Validate(ctx, chosen); err != nil {
		panic(err)
	}
	normalised, _ := password.Normalize(chosen)
	stored, err := hasher.Hash(ctx, normalised)
	if err != nil {
		panic(err)
	}

	// Sign-in, typed with a precomposed é this time.
	typed, err := password.Normalize("caf\u00e9 au lait")
	if err != nil {
		panic(err)
	}
	ok, rehash, err := hasher.Verify(ctx, stored, typed)
	fmt.Println("signed in:", ok, "rehash:", rehash, "err:", err)

	// An unknown user: verify against the dummy hash so the answer takes
	// as long as a wrong password, then answer as for one.
	dummy, err := hasher.DummyHash(ctx)
	if err != nil {
		panic(err)
	}
	ok, _, _ = hasher.Verify(ctx, dummy, typed)
	fmt.Println("unknown user:", ok)
	// Output:
	// refused: password refused: password too short: use at least 8 characters
	// signed in: true rehash: false err: <nil>
	// unknown user: false
}

func ExampleNewCode() {
	code, err := password.NewCode()
	if err != nil {
		panic(err)
	}
	// Send code; later compare what the user typed with the one issued.
	typed := code
	fmt.Println(password.ValidCode(typed), password.CodesEqual(code, typed))
	fmt.Println(password.ValidCode("12 345"))
	// Output:
	// true true
	// false
}
