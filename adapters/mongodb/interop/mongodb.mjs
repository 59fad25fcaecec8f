// Runs Auth.js's own @auth/mongodb-adapter, with the official mongodb
// driver, for ../interop_test.go. One process serves one test.
//
// argv:   <mongodb url> <database name>
// The JSON lines protocol is conformance/nodeproc's (serve-adapter.mjs);
// ObjectIds are written {"$oid": "<hex>"}.
import { MongoClient, ObjectId } from "mongodb"
import { MongoDBAdapter } from "@auth/mongodb-adapter"
import { serveAdapter } from "../../../conformance/nodeproc/serve-adapter.mjs"

const [url, databaseName] = process.argv.slice(2)
const client = new MongoClient(url, { serverSelectionTimeoutMS: 10000 })
const adapter = MongoDBAdapter(client.connect(), { databaseName })

serveAdapter(adapter, {
  close: () => client.close(),
  encode: (v) => (v instanceof ObjectId ? { $oid: v.toHexString() } : undefined),
})
