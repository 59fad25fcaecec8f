// The JS side of the Redis pairing of the Auth.js interop suite
// (conformance/interop, ../interop_test.go): Auth.js's own
// @auth/unstorage-adapter over unstorage's Redis driver (ioredis), served
// by the suite's one JSON-lines loop. One process serves one test.
//
// "$open" config: {url, base} (unstorage's Redis driver options).
import { createStorage } from "unstorage"
import redisDriver from "unstorage/drivers/redis"
import { UnstorageAdapter } from "@auth/unstorage-adapter"
// serve-adapter.mjs ships inside the Go package conformance/nodeproc, whose
// Start writes it out and names it in AUTHPORT_SERVE_ADAPTER.
const { serve } = await import(process.env.AUTHPORT_SERVE_ADAPTER || "nodeproc.Start sets AUTHPORT_SERVE_ADAPTER")

serve(({ url, base }) => {
  const storage = createStorage({ driver: redisDriver({ url, base }) })
  return { adapter: UnstorageAdapter(storage), close: () => storage.dispose() }
})
