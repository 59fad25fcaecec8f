module github.com/authport/authport/adapters/mongodb

go 1.26.0

require (
	github.com/authport/authport/conformance v0.1.0
	github.com/authport/authport/core v0.1.0
	go.mongodb.org/mongo-driver/v2 v2.9.3
)

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/xdg-go/pbkdf2 v1.0.0 // indirect
	github.com/xdg-go/scram v1.2.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	github.com/youmark/pkcs8 v0.0.0-20240726163527-a2c0da244d78 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/authport/authport/conformance => ../../conformance
	github.com/authport/authport/core => ../../core
)
