package password_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/authport/authport/core/password"
)

// A Better Auth app shares the account table and keeps signing users in:
// hash with Better Auth's scrypt, so that every password authport sets is
// one the app verifies, and the app's hashes verify here.
func ExampleNewBetterAuthScrypt() {
	ctx := context.Background()
	hasher, err := password.NewBetterAuthScrypt()
	if err != nil {
		panic(err)
	}
	// A hash Better Auth 1.7's hashPassword wrote for "hunter22".
	fromBetterAuth := "870a36e8e239d61d434c4925d388a38b:ccbfce162d483647f5f6c58865463c6c091b974e179bce8a9c17a1a9a96c8b9c4f3a03e541105b81ecfe37e93795e018a6adbcae51c1a0685857890f703e9559"
	ok, rehash, err := hasher.Verify(ctx, fromBetterAuth, "hunter22")
	fmt.Println("Better Auth's hash:", ok, "rehash:", rehash, "err:", err)

	// What authport writes, Better Auth's verifyPassword reads: salt and
	// key in hex, separated by a colon.
	hash, err := hasher.Hash(ctx, "correct horse battery staple")
	if err != nil {
		panic(err)
	}
	salt, key, _ := strings.Cut(hash, ":")
	fmt.Println("salt:", len(salt), "hex characters, key:", len(key))
	// Output:
	// Better Auth's hash: true rehash: false err: <nil>
	// salt: 32 hex characters, key: 128
}

// Moving off a Better Auth app: authport hashes new passwords with
// Argon2id and reads the app's scrypt hashes too. By default a Better Auth
// hash is kept at sign-in (the app may still read the table); Upgrade
// replaces it with an Argon2id hash at the user's next sign-in.
func ExampleUpgrade() {
	ctx := context.Background()
	// Production uses password.RFC9106Params().
	argon, err := password.NewArgon2id(password.Argon2idParams{Memory: 1024, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	if err != nil {
		panic(err)
	}
	ba, err := password.NewBetterAuthScrypt()
	if err != nil {
		panic(err)
	}
	fromBetterAuth := "870a36e8e239d61d434c4925d388a38b:ccbfce162d483647f5f6c58865463c6c091b974e179bce8a9c17a1a9a96c8b9c4f3a03e541105b81ecfe37e93795e018a6adbcae51c1a0685857890f703e9559"

	keep := password.WithVerifiers(argon, ba.Verifier())
	ok, rehash, _ := keep.Verify(ctx, fromBetterAuth, "hunter22")
	fmt.Println("kept:", ok, "rehash:", rehash)

	upgrade := password.WithVerifiers(argon, password.Upgrade(ba.Verifier()))
	ok, rehash, _ = upgrade.Verify(ctx, fromBetterAuth, "hunter22")
	fmt.Println("upgraded:", ok, "rehash:", rehash)
	if rehash {
		newHash, _ := upgrade.Hash(ctx, "hunter22") // core/auth swaps it in
		fmt.Println(strings.HasPrefix(newHash, "$argon2id$"))
	}
	// Output:
	// kept: true rehash: false
	// upgraded: true rehash: true
	// true
}
