module github.com/authport/authport/examples/demo

go 1.26.0

require (
	github.com/authport/authport/adapters/bbolt v0.1.0
	github.com/authport/authport/adapters/memory v0.1.0
	github.com/authport/authport/adapters/mongodb v0.1.0
	github.com/authport/authport/adapters/postgres-gorm v0.1.0
	github.com/authport/authport/adapters/redis v0.1.0
	github.com/authport/authport/conformance v0.1.0
	github.com/authport/authport/core v0.1.0
	github.com/authport/authport/handler v0.1.0
	github.com/authport/authport/mail v0.1.0
	github.com/authport/authport/oauth v0.1.0
	github.com/authport/authport/passkey v0.1.0
	github.com/authport/authport/totp v0.1.0
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/go-sql-driver/mysql v1.8.1
	github.com/pquerna/otp v1.5.0
	github.com/redis/go-redis/v9 v9.17.2
	go.mongodb.org/mongo-driver/v2 v2.9.3
	gorm.io/driver/mysql v1.6.0
	gorm.io/driver/postgres v1.6.0
	gorm.io/driver/sqlite v1.6.0
	gorm.io/gorm v1.31.1
)

require (
	filippo.io/edwards25519 v1.1.0 // indirect
	github.com/authport/authport/jwt v0.1.0 // indirect
	github.com/authport/authport/tokens v0.1.0 // indirect
	github.com/boombuler/barcode v1.0.1-0.20190219062509-6c824513bacc // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/coreos/go-oidc/v3 v3.21.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/emersion/go-sasl v0.0.0-20241020182733-b788ff22d5a6 // indirect
	github.com/emersion/go-smtp v0.25.1 // indirect
	github.com/fxamacker/cbor/v2 v2.9.4 // indirect
	github.com/go-jose/go-jose/v4 v4.1.9 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/go-viper/mapstructure/v2 v2.5.0 // indirect
	github.com/go-webauthn/webauthn v0.18.2 // indirect
	github.com/go-webauthn/x v0.3.1 // indirect
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.6.0 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/jinzhu/inflection v1.0.0 // indirect
	github.com/jinzhu/now v1.1.5 // indirect
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/mattn/go-sqlite3 v1.14.22 // indirect
	github.com/philhofer/fwd v1.2.0 // indirect
	github.com/tinylib/msgp v1.6.4 // indirect
	github.com/wneessen/go-mail v0.8.1 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/xdg-go/pbkdf2 v1.0.0 // indirect
	github.com/xdg-go/scram v1.2.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	github.com/youmark/pkcs8 v0.0.0-20240726163527-a2c0da244d78 // indirect
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
	github.com/authport/authport/adapters/mongodb => ../../adapters/mongodb
	github.com/authport/authport/adapters/postgres-gorm => ../../adapters/postgres-gorm
	github.com/authport/authport/adapters/redis => ../../adapters/redis
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
