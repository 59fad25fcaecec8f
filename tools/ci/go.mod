module github.com/authport/authport/tools/ci

go 1.26
