// The Node side of conformance/nodeproc for an Auth.js adapter, shared by
// the adapters' interop scripts (imported by relative path; it needs no npm
// package).
//
// stdin:  JSON lines {"id": n, "method": "createUser", "args": [...]}; a Date
//         is written {"$date": "<ISO 8601>"}.
// stdout: JSON lines {"id": n, "result": ...} or {"id": n, "error": "..."},
//         dates again as {"$date": ...}, in the order the calls finish.
// Calls run concurrently, as they arrive, so that the Go side can race them.
// When stdin closes, close() runs and the process exits.
import { createInterface } from "node:readline"

function revive(v) {
  if (Array.isArray(v)) return v.map(revive)
  if (v && typeof v === "object") {
    if (typeof v.$date === "string") return new Date(v.$date)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]))
  }
  return v
}

// serveAdapter answers calls of adapter's methods. encode(v), when given,
// may return a wire form for a value of the script's own types (such as
// {"$oid": ...} for a MongoDB ObjectId), or undefined to leave v as is.
export function serveAdapter(adapter, { close = async () => {}, encode = () => undefined } = {}) {
  const mark = (v) => {
    if (v instanceof Date) return { $date: v.toISOString() }
    const own = encode(v)
    if (own !== undefined) return own
    if (Array.isArray(v)) return v.map(mark)
    if (v && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mark(x)]))
    return v
  }
  const write = (msg) => process.stdout.write(JSON.stringify(msg) + "\n")
  const serve = async (line) => {
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
    await close()
    process.exit(0)
  })
}
