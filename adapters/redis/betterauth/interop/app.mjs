// The Better Auth side of the Redis layout's interop test
// (../interop_test.go): Better Auth's own betterAuth() (pinned in
// package.json and package-lock.json) with secondaryStorage on Redis
// (ioredis), every key under a prefix, and its users in its memory
// adapter. It answers JSON lines {"id", "method", "args": {...}} with
// {"id", "result"} or {"id", "error"}; the first call is "open".
import { createHmac } from "node:crypto"
import { createInterface } from "node:readline"
import { betterAuth } from "better-auth"
import { memoryAdapter } from "better-auth/adapters/memory"
import Redis from "ioredis"

let redis, auth, ctx, secret
const baseURL = "http://localhost:3000"

// secondaryStorage as a Better Auth app writes it over ioredis, each key
// under the prefix; increment as Better Auth's contract says (the TTL set
// on creation only).
function storage(prefix) {
  const k = (key) => prefix + key
  return {
    get: (key) => redis.get(k(key)),
    set: (key, value, ttl) => (ttl ? redis.set(k(key), value, "EX", ttl) : redis.set(k(key), value)),
    delete: (key) => redis.del(k(key)).then(() => null),
    getAndDelete: (key) => redis.getdel(k(key)),
    increment: (key, ttl) =>
      redis.eval("local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end return n", 1, k(key), ttl),
  }
}

// cookie returns the Cookie header of a session token, signed as Better
// Auth's setSignedCookie signs it (HMAC-SHA256 under the secret, padded
// base64, the whole URL-encoded).
function cookie(token) {
  const sig = createHmac("sha256", secret).update(token).digest("base64")
  return "better-auth.session_token=" + encodeURIComponent(token + "." + sig)
}

const headers = (token) => new Headers({ cookie: cookie(token), origin: baseURL })

const methods = {
  async open({ url, prefix, secret: s }) {
    secret = s
    redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2 })
    auth = betterAuth({
      secret,
      baseURL,
      database: memoryAdapter({ user: [], session: [], account: [], verification: [] }),
      secondaryStorage: storage(prefix),
      emailAndPassword: { enabled: true },
      // Counted in secondaryStorage (its default with one): only requests
      // through auth.handler are limited, not the auth.api calls below.
      rateLimit: { enabled: true },
      telemetry: { enabled: false },
      logger: { disabled: true },
    })
    ctx = await auth.$context
    return null
  },
  // signUp signs a user up by e-mail and password: its session token and user.
  async signUp({ email, password, name }) {
    const r = await auth.api.signUpEmail({ body: { email, password, name } })
    return { token: r.token, user: r.user }
  },
  async signIn({ email, password }) {
    const r = await auth.api.signInEmail({ body: { email, password } })
    return { token: r.token, user: r.user }
  },
  // getSession is the app's /get-session with the signed session cookie.
  async getSession({ token }) {
    return await auth.api.getSession({ headers: headers(token), query: { disableCookieCache: true } })
  },
  async signOut({ token }) {
    await auth.api.signOut({ headers: headers(token) })
    return null
  },
  // request sends a JSON POST through the app's router, from the client
  // address ip (x-forwarded-for, which Better Auth trusts when it holds
  // one address), and returns the answer's status.
  async request({ path, ip, body }) {
    const res = await auth.handler(new Request(baseURL + "/api/auth" + path, {
      method: "POST",
      headers: { "content-type": "application/json", origin: baseURL, "x-forwarded-for": ip },
      body: JSON.stringify(body),
    }))
    return res.status
  },
  async listSessions({ userId }) {
    return (await ctx.internalAdapter.listSessions(userId)).map((s) => s.token).sort()
  },
  async revokeSessions({ userId }) {
    await ctx.internalAdapter.deleteUserSessions(userId)
    return null
  },
  async updateUser({ userId, name }) {
    await ctx.internalAdapter.updateUser(userId, { name })
    return null
  },
  async deleteUser({ userId }) {
    await ctx.internalAdapter.deleteUser(userId)
    return null
  },
  async createVerification({ identifier, value, expiresAt }) {
    await ctx.internalAdapter.createVerificationValue({ identifier, value, expiresAt: new Date(expiresAt) })
    return null
  },
  async consumeVerification({ identifier }) {
    const v = await ctx.internalAdapter.consumeVerificationValue(identifier)
    return v ? { identifier: v.identifier, value: v.value, expiresAt: new Date(v.expiresAt).toISOString() } : null
  },
}

const write = (msg) => process.stdout.write(JSON.stringify(msg) + "\n")
const lines = createInterface({ input: process.stdin })
const pending = []
lines.on("line", (line) => {
  const { id, method, args } = JSON.parse(line)
  const run = async () => {
    try {
      if (!methods[method]) throw new Error("no method " + method)
      write({ id, result: (await methods[method](args ?? {})) ?? null })
    } catch (e) {
      write({ id, error: String(e?.stack ?? e) })
    }
  }
  pending.push(run())
})
lines.on("close", async () => {
  await Promise.allSettled(pending)
  if (redis) await redis.quit()
})
