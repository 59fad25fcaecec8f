package handlersec

import (
	"encoding/json"
	"net/http"
)

func decodeJSON(res *http.Response, v any) error {
	defer res.Body.Close()
	return json.NewDecoder(res.Body).Decode(v)
}
