module github.com/authport/authport/mail

go 1.26.0

require (
	github.com/authport/authport/adapters/memory v0.1.0
	github.com/authport/authport/core v0.1.0
	github.com/emersion/go-sasl v0.0.0-20241020182733-b788ff22d5a6
	github.com/emersion/go-smtp v0.25.1
	github.com/wneessen/go-mail v0.8.1
)

require (
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/authport/authport/adapters/memory => ../adapters/memory
	github.com/authport/authport/conformance => ../conformance
	github.com/authport/authport/core => ../core
)
