package main

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
)

// Example builds the demo in-process, as the tests do, on the memory
// adapter with sign-in links printed to stdout, and asks for its home page.
func Example() {
	a, err := newApp(context.Background(), appConfig{
		URL: "http://localhost:8080", DB: "memory", Secret: "a secret of at least 32 bytes, in production",
		Console: os.Stdout,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost:8080/", nil))
	body, _ := io.ReadAll(rec.Body)
	fmt.Println(rec.Code, strings.Contains(string(body), "Not signed in."))
	// Output: 200 true
}
