// Runs an e-mail sign-in through Auth.js's own Auth() (@auth/core, as
// authjs-app.mjs), with an in-memory adapter the Go test seeds and reads,
// for the handler's secret-rotation interop test.
//
// stdin:  {"secret": "..." | ["new", "old"], "action": "send" | "callback",
//          "email": "...",            (send: the address to sign in)
//          "url": "...",              (callback: the link to follow)
//          "tokens": [{"identifier", "token", "expires"}]}  (the table)
// stdout: {"status", "location", "sent": {"url", "token"} | null,
//          "session": GET /session's JSON after a callback that signed in,
//          "tokens": [...the table afterwards]}
const core = new URL(process.env.AUTHPORT_AUTHJS_CORE) // jwttest.AuthCore
const { Auth } = await import(new URL("index.js", core))

const input = JSON.parse(await new Promise((resolve) => {
  let data = ""
  process.stdin.on("data", (c) => (data += c))
  process.stdin.on("end", () => resolve(data))
}))

const tokens = (input.tokens ?? []).map((t) => ({ ...t, expires: new Date(t.expires) }))
const users = new Map()
const adapter = {
  async createVerificationToken(t) { tokens.push(t); return t },
  async useVerificationToken({ identifier, token }) {
    const i = tokens.findIndex((t) => t.identifier === identifier && t.token === token)
    return i < 0 ? null : tokens.splice(i, 1)[0]
  },
  async getUserByEmail(email) { return [...users.values()].find((u) => u.email === email) ?? null },
  async getUser(id) { return users.get(id) ?? null },
  // As a database adapter returns it: columns without a value are null.
  async createUser(u) { const user = { name: null, image: null, ...u, id: "user-" + (users.size + 1) }; users.set(user.id, user); return user },
  async updateUser(u) { const user = { ...users.get(u.id), ...u }; users.set(u.id, user); return user },
  async getUserByAccount() { return null },
  async linkAccount(a) { return a },
}

let sent = null
const config = {
  secret: input.secret,
  basePath: "/auth",
  trustHost: true,
  session: { strategy: "jwt" },
  adapter,
  logger: { error() {}, warn() {}, debug() {} },
  providers: [{
    id: "email", type: "email", name: "Email", from: "auth@example.com", maxAge: 24 * 60 * 60,
    async sendVerificationRequest({ url, token }) { sent = { url, token } },
  }],
}

const app = "http://localhost:3000/auth"
let res
if (input.action === "send") {
  const csrf = await Auth(new Request(app + "/csrf"), config)
  const { csrfToken } = await csrf.json()
  const cookie = csrf.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ")
  res = await Auth(new Request(app + "/signin/email", {
    method: "POST",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: input.email, csrfToken }).toString(),
  }), config)
} else {
  res = await Auth(new Request(input.url), config)
}
// After a callback, the session the new cookie holds (GET /session).
let session = null
const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).filter((c) => c.startsWith("authjs.session-token=")).join("; ")
if (input.action === "callback" && cookie) {
  session = await (await Auth(new Request(app + "/session", { headers: { cookie } }), config)).json()
}
process.stdout.write(JSON.stringify({
  status: res.status,
  location: res.headers.get("location") ?? "",
  sent,
  session,
  tokens: tokens.map((t) => ({ ...t, expires: t.expires.toISOString() })),
}))
