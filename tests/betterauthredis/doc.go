// Package betterauthredis holds the Redis row of the Better Auth interop
// suite (conformance/interop/betterauth): a Better Auth app with its users
// and accounts in PostgreSQL and secondaryStorage on Redis, and authport
// with the same split, adapters/redis/betterauth over adapters/postgres-gorm
// with the BetterAuth preset. It is a test-only module (see ../README.md):
// it imports both adapters' modules, which import neither.
package betterauthredis
