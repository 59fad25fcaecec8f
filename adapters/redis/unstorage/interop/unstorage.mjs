// The JS side of the Redis pairing of the Auth.js interop suite
// (conformance/interop, ../interop_test.go): Auth.js's own
// @auth/unstorage-adapter over unstorage's Redis driver (ioredis), served
// by the suite's one JSON-lines loop. One process serves one test.
//
// "$open" config: {url, base} (unstorage's Redis driver options).
import { createStorage } from "unstorage"
import redisDriver from "unstorage/drivers/redis"
import { UnstorageAdapter } from "@auth/unstorage-adapter"
import { serve } from "../../../../conformance/nodeproc/serve-adapter.mjs"

serve(({ url, base }) => {
  const storage = createStorage({ driver: redisDriver({ url, base }) })
  return { adapter: UnstorageAdapter(storage), close: () => storage.dispose() }
})
