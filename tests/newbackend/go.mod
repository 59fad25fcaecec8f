module github.com/authport/authport/tests/newbackend

go 1.26.0
