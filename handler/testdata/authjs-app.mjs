// Runs requests through Auth.js's own Auth() (@auth/core, installed by
// npm ci in the jwt module's interop folder; jwttest.RunNode passes its
// location) for the handler's interop tests.
//
// stdin:  {"secret": "...", "requests": [{"method", "url", "cookie", "body"}]}
//         Auth.js is configured with basePath /auth, a credentials provider
//         accepting ada/lovelace (user id "user-ada") and JWT sessions.
// stdout: [{"status", "location", "setCookies": ["name=value; ..."], "body"}]
const core = new URL(process.env.AUTHPORT_AUTHJS_CORE) // jwttest.AuthCore: the jwt module's npm ci
const { Auth } = await import(new URL("index.js", core))
const { default: Credentials } = await import(new URL("providers/credentials.js", core))

const input = JSON.parse(await new Promise((resolve) => {
  let data = ""
  process.stdin.on("data", (c) => (data += c))
  process.stdin.on("end", () => resolve(data))
}))

const config = {
  secret: input.secret,
  basePath: "/auth",
  trustHost: true,
  session: { strategy: "jwt" },
  logger: { error() {}, warn() {}, debug() {} },
  providers: [
    Credentials({
      credentials: { username: {}, password: {} },
      authorize: async (c) =>
        c.username === "ada" && c.password === "lovelace"
          ? { id: "user-ada", email: "ada@example.com", name: "Ada Lovelace" }
          : null,
    }),
  ],
}

const out = []
for (const r of input.requests) {
  const headers = new Headers()
  if (r.cookie) headers.set("cookie", r.cookie)
  if (r.body) headers.set("content-type", "application/x-www-form-urlencoded")
  const res = await Auth(new Request(r.url, { method: r.method, headers, body: r.body || undefined }), config)
  out.push({
    status: res.status,
    location: res.headers.get("location") ?? "",
    setCookies: res.headers.getSetCookie(),
    body: await res.text(),
  })
}
process.stdout.write(JSON.stringify(out))
