module github.com/authport/authport/core

go 1.26.0

require (
	golang.org/x/crypto v0.57.0
	golang.org/x/net v0.58.0
	golang.org/x/text v0.42.0
)

require golang.org/x/sys v0.48.0 // indirect
