// The Node side of conformance/nodeproc for an Auth.js adapter: the one
// JSON-lines loop that every interop pairing's script runs (it needs no npm
// package). It ships inside the Go package: nodeproc.Start writes it out
// and gives the script its file: URL in AUTHPORT_SERVE_ADAPTER, so a
// script in any module imports it by that name:
//
//   const { serve } = await import(process.env.AUTHPORT_SERVE_ADAPTER)
//
// A pairing's script only says which @auth/* adapter to construct, in the
// open function it passes to serve.
//
// stdin:  JSON lines {"id": n, "method": "createUser", "args": [...]}; a Date
//         is written {"$date": "<ISO 8601>"}.
// stdout: JSON lines {"id": n, "result": ...} or {"id": n, "error": "...",
//         "code": "..."}, dates again as {"$date": ...} and bigints as
//         numbers, in the order the calls finish.
// Two methods belong to the loop itself:
//   "$open" [config]  calls open(config) and answers with its info;
//   "$gc"             runs Node's garbage collector (node --expose-gc).
// Calls run concurrently, as they arrive, so that the Go side can race them.
// When stdin closes, the loop waits for the calls in flight, runs close()
// and exits.
import { createInterface } from "node:readline"

function revive(v) {
  if (Array.isArray(v)) return v.map(revive)
  if (v && typeof v === "object") {
    if (typeof v.$date === "string" && Object.keys(v).length === 1) return new Date(v.$date)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]))
  }
  return v
}

// describe returns an error's message with those of its causes, and the
// first code among them.
function describe(err) {
  let error = String(err?.message ?? err)
  let code = err?.code ?? ""
  for (let c = err?.cause; c; c = c.cause) {
    error += `: ${c.message ?? c}`
    code ||= c.code ?? ""
  }
  return { error, code: String(code) }
}

// serve answers calls of the adapter that open(config) makes. open returns
// {adapter, close, encode, info}: close() runs at the end; encode(v), when
// given, may return a wire form for a value of the script's own types (such
// as {"$oid": ...} for a MongoDB ObjectId), or undefined to leave v as is;
// info is the answer to "$open" (such as the DDL the script ran). A call
// that comes before "$open" opens with an empty config.
export function serve(open) {
  let opened = null
  const ready = (config = {}) => (opened ??= Promise.resolve(open(config)))
  const mark = (v, encode) => {
    if (v instanceof Date) return { $date: v.toISOString() }
    if (typeof v === "bigint") return Number(v)
    const own = encode?.(v)
    if (own !== undefined) return own
    if (Array.isArray(v)) return v.map((x) => mark(x, encode))
    if (v && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mark(x, encode)]))
    return v
  }
  const call = async (req) => {
    const args = revive(req.args ?? [])
    if (req.method === "$open") return (await ready(args[0])).info
    if (req.method === "$gc") {
      if (!globalThis.gc) throw new Error("run node with --expose-gc")
      return globalThis.gc()
    }
    const { adapter } = await ready()
    const fn = adapter[req.method]
    if (typeof fn !== "function") throw new Error(`no method ${req.method}`)
    return fn.apply(adapter, args)
  }
  const write = (msg) => process.stdout.write(JSON.stringify(msg) + "\n")
  const serveLine = async (line) => {
    let req
    try {
      req = JSON.parse(line)
      const result = await call(req)
      write({ id: req.id, result: mark(result ?? null, opened && (await opened).encode) })
    } catch (err) {
      write({ id: req?.id ?? -1, ...describe(err) })
    }
  }
  const pending = new Set()
  const rl = createInterface({ input: process.stdin })
  rl.on("line", (line) => {
    if (!line.trim()) return
    const p = serveLine(line)
    pending.add(p)
    p.finally(() => pending.delete(p))
  })
  rl.on("close", async () => {
    await Promise.allSettled([...pending])
    // An open that failed was answered already; there is nothing to close.
    const done = await opened?.catch(() => null)
    await done?.close?.()
    process.exit(0)
  })
}

// serveAdapter serves a ready-made adapter, with the close and encode of
// serve's open.
export function serveAdapter(adapter, { close, encode } = {}) {
  serve(() => ({ adapter, close, encode }))
}
