module github.com/authport/authport/tests/betterauthredis

go 1.26.0

require (
	github.com/authport/authport/adapters/postgres-gorm v0.1.0
	github.com/authport/authport/adapters/redis v0.1.0
	github.com/authport/authport/conformance v0.1.0
	github.com/jackc/pgx/v5 v5.6.0
	github.com/redis/go-redis/v9 v9.17.2
	gorm.io/driver/postgres v1.6.0
	gorm.io/gorm v1.31.1
)

require (
	github.com/authport/authport/core v0.1.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/jinzhu/inflection v1.0.0 // indirect
	github.com/jinzhu/now v1.1.5 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/authport/authport/adapters/memory => ../../adapters/memory
	github.com/authport/authport/adapters/postgres-gorm => ../../adapters/postgres-gorm
	github.com/authport/authport/adapters/redis => ../../adapters/redis
	github.com/authport/authport/conformance => ../../conformance
	github.com/authport/authport/core => ../../core
)
