/**
 * A journal that cannot be used (SPEC §4.14, §6): a `journal.db` that is not a
 * database, one another program holds locked, one written by a newer version.
 * Each is a clear error naming the file and what to do, before the model is
 * asked anything, and the file is left byte for byte as it was.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import Database from "libsql"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Crash from "./support/crash.js"

const digest = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")

/** Run `-p` on a machine whose journal.db was prepared by `prepare`; what it printed, and the file before and after. */
const runWith = (prepare: (file: string) => void) =>
  Effect.gen(function*() {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-badjournal-")))
    const h = yield* Crash.harness(dir, [])
    const m = h.machine("m")
    fs.mkdirSync(m.home, { recursive: true })
    const file = path.join(m.home, "journal.db")
    prepare(file)
    const before = digest(file)
    const run = yield* h.run(m, ["-p", "start", ...h.common(m)], undefined)
    return { run, before, after: digest(file), requests: h.requests.length, file, dir }
  })

describe("a journal that cannot be used (SPEC §4.14)", () => {
  it.scopedLive(
    "a journal.db that is not a database: a clear error, the file untouched, nothing asked",
    () =>
      Effect.gen(function*() {
        const result = yield* runWith((file) => fs.writeFileSync(file, "not a database\n".repeat(500)))
        expect(result.run.code).toBe(1)
        expect(result.run.stderr).toContain(`The journal ${result.file} is not a database it can read`)
        expect(result.run.stderr).toContain("move it away to start a new journal, or set SWITCHYARD_JOURNAL_URL=off")
        expect(result.after).toBe(result.before)
        expect(result.requests).toBe(0)
      }),
    60_000
  )

  it.scopedLive(
    "a journal.db another program holds locked: a clear error once the wait is over, nothing changed",
    () =>
      Effect.gen(function*() {
        let holder: Database.Database | undefined
        const result = yield* runWith((file) => {
          const db = new Database(file)
          db.pragma("journal_mode = WAL")
          db.exec("CREATE TABLE other (x)")
          db.exec("BEGIN EXCLUSIVE")
          db.exec("INSERT INTO other VALUES (1)")
          holder = db
        })
        holder?.exec("ROLLBACK")
        holder?.close()
        expect(result.run.code).toBe(1)
        expect(result.run.stderr).toContain(`The journal ${result.file} is locked by another program`)
        expect(result.run.stderr).toContain("nothing was changed")
        expect(result.requests).toBe(0)
        // What the other program had committed is all there is: no table of the journal's.
        const db = new Database(result.file)
        expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([{ name: "other" }])
        db.close()
      }),
    60_000
  )

  it.scopedLive(
    "a journal written by a newer version: a clear error, the file untouched",
    () =>
      Effect.gen(function*() {
        const result = yield* runWith((file) => {
          const db = new Database(file)
          db.exec("CREATE TABLE switchyard_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
          db.exec("INSERT INTO switchyard_meta VALUES ('format', '99')")
          db.exec("CREATE TABLE switchyard_future (x)")
          db.close()
        })
        expect(result.run.code).toBe(1)
        expect(result.run.stderr).toContain(`The journal ${result.file} was written by a newer Switchyard (format 99`)
        expect(result.run.stderr).toContain("it was left as it is")
        expect(result.after).toBe(result.before)
        expect(result.requests).toBe(0)
      }),
    60_000
  )
})
