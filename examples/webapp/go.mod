module github.com/authport/authport/examples/webapp

go 1.26.0

require (
	github.com/authport/authport/adapters/bbolt v0.1.0
	github.com/authport/authport/adapters/postgres-gorm v0.1.0
	github.com/authport/authport/conformance v0.1.0
	github.com/authport/authport/core v0.1.0
	github.com/authport/authport/handler v0.1.0
	github.com/authport/authport/oauth v0.1.0
	github.com/authport/authport/totp v0.1.0
	github.com/pquerna/otp v1.5.0
	gorm.io/driver/postgres v1.6.0
	gorm.io/gorm v1.31.1
)

require (
	github.com/authport/authport/jwt v0.1.0 // indirect
	github.com/authport/authport/tokens v0.1.0 // indirect
	github.com/boombuler/barcode v1.0.1-0.20190219062509-6c824513bacc // indirect
	github.com/coreos/go-oidc/v3 v3.21.0 // indirect
	github.com/go-jose/go-jose/v4 v4.1.9 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.6.0 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/jinzhu/inflection v1.0.0 // indirect
	github.com/jinzhu/now v1.1.5 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/authport/authport/adapters/bbolt => ../../adapters/bbolt
	github.com/authport/authport/adapters/memory => ../../adapters/memory
	github.com/authport/authport/adapters/postgres-gorm => ../../adapters/postgres-gorm
	github.com/authport/authport/conformance => ../../conformance
	github.com/authport/authport/core => ../../core
	github.com/authport/authport/handler => ../../handler
	github.com/authport/authport/jwt => ../../jwt
	github.com/authport/authport/mail => ../../mail
	github.com/authport/authport/oauth => ../../oauth
	github.com/authport/authport/passkey => ../../passkey
	github.com/authport/authport/tokens => ../../tokens
	github.com/authport/authport/totp => ../../totp
)
