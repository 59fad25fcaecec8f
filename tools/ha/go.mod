module github.com/authport/authport/tools/ha

go 1.26
