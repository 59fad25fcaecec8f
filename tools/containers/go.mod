module github.com/authport/authport/tools/containers

go 1.26
