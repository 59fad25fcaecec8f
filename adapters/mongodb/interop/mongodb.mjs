// The JS side of the MongoDB pairing of the Auth.js interop suite
// (conformance/interop, ../interop_test.go): Auth.js's own
// @auth/mongodb-adapter with the official mongodb driver, served by the
// suite's one JSON-lines loop. One process serves one test.
//
// "$open" config: {url, databaseName}. ObjectIds are written {"$oid": "<hex>"}.
import { MongoClient, ObjectId } from "mongodb"
import { MongoDBAdapter } from "@auth/mongodb-adapter"
// serve-adapter.mjs ships inside the Go package conformance/nodeproc, whose
// Start writes it out and names it in AUTHPORT_SERVE_ADAPTER.
const { serve } = await import(process.env.AUTHPORT_SERVE_ADAPTER || "nodeproc.Start sets AUTHPORT_SERVE_ADAPTER")

serve(({ url, databaseName }) => {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 10000 })
  return {
    adapter: MongoDBAdapter(client.connect(), { databaseName }),
    close: () => client.close(),
    encode: (v) => (v instanceof ObjectId ? { $oid: v.toHexString() } : undefined),
  }
})
