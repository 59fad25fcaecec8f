// An Auth.js application whose users table has an extra column ("role"),
// for ../interop_userdata_test.go. One operation per run; prints JSON.
//
//   node userdata.mjs URL SCHEMA get EMAIL         Auth.js's getUserByEmail
//   node userdata.mjs URL SCHEMA create EMAIL ROLE createUser, then the app sets its role
//   node userdata.mjs URL SCHEMA rename ID NAME    Auth.js's updateUser of the name
import pg from "pg";
import PostgresAdapter from "@auth/pg-adapter";

const [url, schema, op, ...args] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 2 });
const adapter = PostgresAdapter(pool);
let out;
try {
  switch (op) {
    case "get":
      out = await adapter.getUserByEmail(args[0]);
      break;
    case "create": {
      const user = await adapter.createUser({ email: args[0], name: null, image: null, emailVerified: null });
      // The application's own write of its column, as in an Auth.js
      // createUser event.
      await pool.query("UPDATE users SET role = $1 WHERE id = $2", [args[1], user.id]);
      out = { id: String(user.id) };
      break;
    }
    case "rename":
      out = await adapter.updateUser({ id: args[0], name: args[1] });
      break;
    default:
      throw new Error(`unknown op ${op}`);
  }
  process.stdout.write(JSON.stringify(out) + "\n");
} finally {
  await pool.end();
}
