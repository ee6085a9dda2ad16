/**
 * A throw-away PostgreSQL server for a test: `initdb` into a temporary
 * directory, `pg_ctl start` with its Unix socket in that directory (no TCP
 * port), stopped and removed when the scope closes. The binaries come from
 * Debian's `/usr/lib/postgresql/<version>/bin` (the newest) or the PATH; as
 * root, the server runs as the `postgres` user (or `nobody`), since
 * PostgreSQL refuses to run as root. `find()` is undefined when PostgreSQL is
 * not installed: the test then skips, naming the Debian package.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

export interface Postgres {
  /** `postgresql://postgres@/postgres?host=<socket dir>` */
  readonly url: string
  /** Another database on the same server (made on first use). */
  readonly database: (name: string) => string
}

/** The directory holding `initdb` and `pg_ctl`, if PostgreSQL is installed. */
export const find = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  if (fs.existsSync(root)) {
    const versions = fs.readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))
    for (const version of versions) {
      const bin = path.join(root, version, "bin")
      if (fs.existsSync(path.join(bin, "initdb")) && fs.existsSync(path.join(bin, "pg_ctl"))) return bin
    }
  }
  const which = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" })
  const initdb = which.stdout.trim()
  return initdb === "" ? undefined : path.dirname(fs.realpathSync(initdb))
}

/** The skip notice when PostgreSQL is missing. */
export const missing = "skipped: PostgreSQL's initdb/pg_ctl not found (Debian package: postgresql)"

const runAs = (): { readonly user: string; readonly uid: number; readonly gid: number } | undefined => {
  if (process.getuid?.() !== 0) return undefined
  for (const user of ["postgres", "nobody"]) {
    const id = spawnSync("id", ["-u", user], { encoding: "utf8" })
    const gid = spawnSync("id", ["-g", user], { encoding: "utf8" })
    if (id.status === 0) return { user, uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) }
  }
  return undefined
}

/** Start a server for the scope. */
export const start = (bin: string): Effect.Effect<Postgres, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "switchyard-pg-")))
      const data = path.join(dir, "data")
      const owner = runAs()
      if (owner !== undefined) fs.chownSync(dir, owner.uid, owner.gid)
      const exec = (program: string, args: ReadonlyArray<string>) =>
        owner === undefined
          ? execFileSync(path.join(bin, program), args, { stdio: "pipe" })
          : execFileSync("runuser", ["-u", owner.user, "--", path.join(bin, program), ...args], { stdio: "pipe" })
      exec("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
      // A test server: no fsync, a socket in the directory, no TCP.
      const settings = `-k ${dir} -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off`
      exec("pg_ctl", ["-D", data, "-o", settings, "-w", "-s", "-l", path.join(dir, "server.log"), "start"])
      return { dir, data, exec }
    }),
    ({ data, dir, exec }) =>
      Effect.sync(() => {
        try {
          exec("pg_ctl", ["-D", data, "-m", "immediate", "-s", "stop"])
        } finally {
          fs.rmSync(dir, { recursive: true, force: true })
        }
      })
  ).pipe(Effect.map(({ dir, exec }) => {
    const made = new Set<string>()
    return {
      url: `postgresql://postgres@/postgres?host=${dir}`,
      database: (name: string) => {
        if (!made.has(name)) {
          exec(path.join(path.dirname(bin), "bin", "createdb").replace(/.*\//, "createdb"), [
            "-h",
            dir,
            "-U",
            "postgres",
            name
          ])
          made.add(name)
        }
        return `postgresql://postgres@/${name}?host=${dir}`
      }
    }
  }))
