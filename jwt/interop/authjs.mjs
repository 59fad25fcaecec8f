// Runs Auth.js's own encode/decode (@auth/core/jwt) for ../interop_test.go.
//
// stdin:  a JSON array of requests, each
//           {"op": "encode", "secret": "s" | ["s", ...], "salt": "...", "claims": {...}, "maxAge": seconds}
//           {"op": "decode", "secret": "s" | ["s", ...], "salt": "...", "token": "..."}
//           {"op": "getToken", "secret": "s" | ["s", ...], "cookieName": "...", "cookie": "a=b; c=d"}
//           {"op": "chunk", "cookieName": "...", "value": "..."}
// stdout: a JSON array of results, one per request, in order:
//           {"token": "..."} | {"claims": {...} | null} | {"cookies": [{"name", "value"}]}
//           | {"error": "message", "code": "ERR_..."}
//
// "chunk" runs the SessionStore Auth.js uses to split a large session cookie;
// it is not among the package's exports, so it is imported by file.
import { decode, encode, getToken } from "@auth/core/jwt"

const { SessionStore } = await import(
  new URL("./node_modules/@auth/core/lib/utils/cookie.js", import.meta.url)
)
const quiet = { debug() {}, warn() {}, error() {} }

async function run(req) {
  try {
    switch (req.op) {
      case "encode":
        return {
          token: await encode({
            secret: req.secret,
            salt: req.salt,
            token: req.claims,
            maxAge: req.maxAge,
          }),
        }
      case "decode":
        return {
          claims: await decode({
            secret: req.secret,
            salt: req.salt,
            token: req.token,
          }),
        }
      case "getToken":
        return {
          claims: await getToken({
            req: { headers: { cookie: req.cookie } },
            secret: req.secret,
            cookieName: req.cookieName,
            logger: quiet,
          }),
        }
      case "chunk": {
        const store = new SessionStore(
          { name: req.cookieName, options: {} },
          {},
          quiet
        )
        return {
          cookies: store
            .chunk(req.value, {})
            .map(({ name, value }) => ({ name, value })),
        }
      }
      default:
        return { error: `unknown op ${JSON.stringify(req.op)}` }
    }
  } catch (err) {
    return { error: String(err?.message ?? err), code: err?.code ?? "" }
  }
}

let input = ""
process.stdin.setEncoding("utf8")
for await (const chunk of process.stdin) input += chunk
const results = []
for (const req of JSON.parse(input)) results.push(await run(req))
process.stdout.write(JSON.stringify(results))
