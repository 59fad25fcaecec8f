module github.com/authport/authport/adapters/redis

go 1.26.0

require (
	github.com/authport/authport/conformance v0.1.0
	github.com/authport/authport/core v0.1.0
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/redis/go-redis/v9 v9.17.2
)

require (
	github.com/authport/authport/adapters/memory v0.1.0
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/authport/authport/conformance => ../../conformance
	github.com/authport/authport/core => ../../core
)

replace github.com/authport/authport/adapters/memory => ../memory
