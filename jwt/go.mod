module github.com/authport/authport/jwt

go 1.26.0

require github.com/go-jose/go-jose/v4 v4.1.9
