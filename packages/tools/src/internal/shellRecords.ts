/**
 * What the shell walk records per simple command and per redirection, and
 * the record of a command the program table does not describe.
 *
 * @internal
 */
import type * as ShellAnalysis from "@switchyard/core/ShellAnalysis"
import type { Word } from "./programs/table.js"

export interface CommandRecord {
  readonly text: string
  readonly words: ReadonlyArray<Word>
  readonly assignments: ReadonlyArray<string>
  readonly redirects: ReadonlyArray<ShellAnalysis.Redirect>
  readonly readOnly: boolean
  readonly readPaths: ReadonlyArray<ShellAnalysis.PathUse>
  readonly writePaths: ReadonlyArray<ShellAnalysis.PathUse>
  readonly pathsKnown: boolean
  readonly unresolvedPaths: boolean
  readonly unresolvedWords: ReadonlyArray<string>
  readonly onlyWritesPaths: boolean
}

export interface RedirectRecord {
  /** Set for output redirections to a file. */
  readonly redirect: ShellAnalysis.Redirect | undefined
  readonly safe: boolean
  /** The file it reads (`< f`) or writes (`> f`), when it names one. */
  readonly read?: ShellAnalysis.PathUse
  readonly write?: ShellAnalysis.PathUse
  /** Its target is static. */
  readonly known: boolean
  /** The target as written, when it is not static. */
  readonly unresolved?: string
}

/** A command record for something that is not a program invocation the table knows. */
export const opaque = (
  text: string,
  words: ReadonlyArray<Word>,
  assignments: ReadonlyArray<string>,
  redirects: ReadonlyArray<RedirectRecord>,
  pathsKnown: boolean,
  readOnly = false
): CommandRecord => ({
  text,
  words,
  assignments,
  redirects: redirects.flatMap((record) => (record.redirect === undefined ? [] : [record.redirect])),
  readOnly,
  ...redirectPaths(redirects),
  pathsKnown: pathsKnown && redirects.every((record) => record.known),
  unresolvedPaths: !redirects.every((record) => record.known),
  unresolvedWords: unresolvedTargets(redirects),
  onlyWritesPaths: false
})

export const unresolvedTargets = (redirects: ReadonlyArray<RedirectRecord>): ReadonlyArray<string> =>
  redirects.flatMap((record) => (record.unresolved === undefined ? [] : [record.unresolved]))

export const redirectPaths = (redirects: ReadonlyArray<RedirectRecord>) => ({
  readPaths: redirects.flatMap((record) => (record.read === undefined ? [] : [record.read])),
  writePaths: redirects.flatMap((record) => (record.write === undefined ? [] : [record.write]))
})
