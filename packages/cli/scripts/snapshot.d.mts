/** The types of snapshot.mjs, for the tests and benchmarks that import it. */

/** V8 flags the start-up blobs are built and started with (the launcher passes them). */
export declare const flags: ReadonlyArray<string>

/** Build the start-up snapshots; resolves to a line for the build's log. */
export declare const buildSnapshot: (options: {
  readonly here: string
  readonly outdir: string
  readonly external: ReadonlyArray<string>
  readonly plugins: ReadonlyArray<unknown>
}) => Promise<string>
