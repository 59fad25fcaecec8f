// Runs Auth.js's own @auth/unstorage-adapter, over unstorage's Redis driver
// (ioredis), for ../interop_test.go. One process serves one test.
//
// argv:   <redis url> <base>   (unstorage's Redis driver options url and base)
// The JSON lines protocol is conformance/nodeproc's (serve-adapter.mjs).
import { createStorage } from "unstorage"
import redisDriver from "unstorage/drivers/redis"
import { UnstorageAdapter } from "@auth/unstorage-adapter"
import { serveAdapter } from "../../../../conformance/nodeproc/serve-adapter.mjs"

const [url, base] = process.argv.slice(2)
const storage = createStorage({ driver: redisDriver({ url, base }) })
const adapter = UnstorageAdapter(storage)

serveAdapter(adapter, { close: () => storage.dispose() })
