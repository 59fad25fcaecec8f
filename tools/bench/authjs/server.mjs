// Auth.js's own request handler for tools/bench's HTTP rows: @auth/core's
// Auth() served by Node's http server, on @auth/pg-adapter (PostgreSQL) or
// @auth/unstorage-adapter (Redis, unstorage's Redis driver), or with JWT
// sessions and no adapter.
//
// argv[2] is a JSON object:
//   {"secret", "adapter": "pg"|"unstorage"|"none", "url", "schema" (pg),
//    "base" (unstorage), "strategy": "database"|"jwt", "updateAge" (seconds)}
// It listens on 127.0.0.1 on a free port and writes "listening <port>\n".
// Routes: /auth/* through Auth() (basePath /auth, an e-mail provider "email"
// that keeps the last link per address instead of sending it), and
// GET /bench/link?email=<address>, which answers that link (404 if none).
// It exits when its stdin closes. With AUTHPORT_BENCH_DEBUG set, Auth.js's
// errors go to stderr (the bench then copies node's stderr to its own).
import http from "node:http"
import { Auth } from "@auth/core"

const cfg = JSON.parse(process.argv[2])
const links = new Map()
let adapter
let close = async () => {}
if (cfg.adapter === "pg") {
  const { default: PostgresAdapter } = await import("@auth/pg-adapter")
  const pg = (await import("pg")).default
  const pool = new pg.Pool({ connectionString: cfg.url, options: `-c search_path=${cfg.schema}`, max: 32 })
  adapter = PostgresAdapter(pool)
  close = () => pool.end()
} else if (cfg.adapter === "unstorage") {
  const { createStorage } = await import("unstorage")
  const { default: redisDriver } = await import("unstorage/drivers/redis")
  const { UnstorageAdapter } = await import("@auth/unstorage-adapter")
  const storage = createStorage({ driver: redisDriver({ url: cfg.url, base: cfg.base }) })
  adapter = UnstorageAdapter(storage)
  close = () => storage.dispose()
}

const providers = []
if (adapter) {
  providers.push({
    id: "email",
    type: "email",
    name: "Email",
    from: "bench@bench.example",
    maxAge: 24 * 60 * 60,
    async sendVerificationRequest({ identifier, url }) {
      links.set(identifier, url)
    },
    options: {},
  })
} else {
  const { default: Credentials } = await import("@auth/core/providers/credentials")
  providers.push(Credentials({ credentials: {}, authorize: async () => null }))
}

const config = {
  secret: cfg.secret,
  basePath: "/auth",
  trustHost: true,
  adapter,
  session: { strategy: cfg.strategy, ...(cfg.updateAge !== undefined ? { updateAge: cfg.updateAge } : {}) },
  logger: { error(e) { if (process.env.AUTHPORT_BENCH_DEBUG) console.error(e) }, warn() {}, debug() {} },
  providers,
}

async function readBody(req) {
  const chunks = []
  for await (const c of req) chunks.push(c)
  return chunks.length ? Buffer.concat(chunks) : undefined
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, `http://${req.headers.host}`)
    if (url.pathname === "/bench/link") {
      const link = links.get(url.searchParams.get("email"))
      res.writeHead(link ? 200 : 404, { "content-type": "text/plain" })
      res.end(link ?? "")
      return
    }
    const headers = new Headers()
    for (const [k, v] of Object.entries(req.headers)) {
      if (Array.isArray(v)) for (const x of v) headers.append(k, x)
      else if (v !== undefined) headers.set(k, v)
    }
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await readBody(req)
    const response = await Auth(new Request(url, { method: req.method, headers, body }), config)
    const out = {}
    response.headers.forEach((v, k) => {
      if (k !== "set-cookie") out[k] = v
    })
    const cookies = response.headers.getSetCookie()
    if (cookies.length) out["set-cookie"] = cookies
    const text = Buffer.from(await response.arrayBuffer())
    out["content-length"] = String(text.length)
    res.writeHead(response.status, out)
    res.end(text)
  } catch (e) {
    res.writeHead(500, { "content-type": "text/plain" })
    res.end(String(e?.stack ?? e))
  }
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`)
})
process.stdin.resume()
process.stdin.on("end", async () => {
  server.close()
  server.closeAllConnections?.()
  await close()
  process.exit(0)
})
