// The JS side of the MongoDB row of the Better Auth interop suite
// (conformance/interop/betterauth, ../interop_betterauth_test.go):
// betterAuth() on Better Auth's own mongodbAdapter (better-auth/adapters/mongodb)
// with the official mongodb driver, on the database authport's adapter
// opened with mongoadapter.BetterAuth(). Better Auth makes its collections
// and indexes itself, on first use.
//
// "$open" config: {url, databaseName, transactions}. transactions hands the
// client to the adapter, which then runs its multi-step writes in
// transactions (a replica set only).
import { MongoClient } from "mongodb"
import { betterAuth } from "better-auth"
import { mongodbAdapter } from "better-auth/adapters/mongodb"

const { serveBetterAuth } = await import(process.env.AUTHPORT_SERVE_BETTERAUTH || "betterauth.Start sets AUTHPORT_SERVE_BETTERAUTH")

serveBetterAuth(async (config, options) => {
  const client = new MongoClient(config.url, { serverSelectionTimeoutMS: 10000 })
  await client.connect()
  const db = client.db(config.databaseName)
  const auth = betterAuth({
    ...options,
    database: mongodbAdapter(db, config.transactions ? { client } : { transaction: false }),
  })
  return { auth, close: () => client.close(), info: {} }
})
