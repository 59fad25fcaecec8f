module github.com/authport/authport/core

go 1.26
