// Runs Auth.js's own @auth/unstorage-adapter, over unstorage's Redis driver
// (ioredis), for ../interop_test.go. One process serves one test.
//
// argv:   <redis url> <base>   (unstorage's Redis driver options url and base)
// stdin:  JSON lines {"id": n, "method": "createUser", "args": [...]}; a Date
//         is written {"$date": "<ISO 8601>"}.
// stdout: JSON lines {"id": n, "result": ...} or {"id": n, "error": "..."},
//         dates again as {"$date": ...}, in the order the calls finish.
// Calls run concurrently, as they arrive, so that the Go side can race them.
import { createInterface } from "node:readline"
import { createStorage } from "unstorage"
import redisDriver from "unstorage/drivers/redis"
import { UnstorageAdapter } from "@auth/unstorage-adapter"

const [url, base] = process.argv.slice(2)
const storage = createStorage({ driver: redisDriver({ url, base }) })
const adapter = UnstorageAdapter(storage)

function revive(v) {
  if (Array.isArray(v)) return v.map(revive)
  if (v && typeof v === "object") {
    if (typeof v.$date === "string") return new Date(v.$date)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]))
  }
  return v
}

function mark(v) {
  if (v instanceof Date) return { $date: v.toISOString() }
  if (Array.isArray(v)) return v.map(mark)
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mark(x)]))
  return v
}

const write = (msg) => process.stdout.write(JSON.stringify(msg) + "\n")

async function serve(line) {
  let req
  try {
    req = JSON.parse(line)
    const fn = adapter[req.method]
    if (typeof fn !== "function") throw new Error(`no method ${req.method}`)
    const result = await fn(...revive(req.args ?? []))
    write({ id: req.id, result: mark(result ?? null) })
  } catch (err) {
    write({ id: req?.id ?? -1, error: String(err?.stack ?? err) })
  }
}

const rl = createInterface({ input: process.stdin })
rl.on("line", (line) => void serve(line))
rl.on("close", async () => {
  await storage.dispose()
  process.exit(0)
})
