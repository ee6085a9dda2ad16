/**
 * The permission chain of SPEC §4.5, as the live `Permissions.PermissionPolicy`:
 * PreToolUse hooks (already run; their answer is `request.hook`) → rules →
 * the tool's own `checkPermissions` → mode → classifier (mode `auto`) →
 * asking the user.
 *
 * In order, for one call:
 * 1. a hook's deny (exit 2, `decision: "block"`, `permissionDecision: "deny"`) denies;
 * 2. a deny rule denies (also in `bypassPermissions`);
 * 3. the tool's `checkPermissions` deny denies;
 * 4. in `plan` mode, a call that is not read-only is denied with a message that plan mode is on;
 * 5. an ask rule — or a hook that answers `ask` — asks the user (even in
 *    `bypassPermissions`; never the classifier; a hook's allow does not skip it);
 *    so does a Bash call that asks to leave an enabled sandbox
 *    (`dangerouslyDisableSandbox`), which is denied instead when
 *    `sandbox.allowUnsandboxedCommands` is false;
 * 6. a hook's allow allows (it skips every default ask below);
 * 7. the tool's `checkPermissions` ask asks, unless the mode is `bypassPermissions`;
 * 8. allow rules (settings or session) and the read-only set allow; with the
 *    sandbox on and `sandbox.autoAllowBashIfSandboxed` (the default), so does a
 *    Bash command that will run sandboxed (not excluded, sandbox available);
 * 9. `bypassPermissions` allows; `acceptEdits` allows edits and filesystem
 *    commands inside the working directories;
 * 10. what is left would ask: `dontAsk` denies, `auto` asks the classifier
 *    (the user when no classifier is provided), other modes ask the user.
 *
 * Asking the user publishes `PermissionRequested` first. "no" denies with
 * `rejectedByUser` (the engine aborts the turn); "always" adds session rules
 * narrowed to the command prefix or path, and with `persist` writes them to
 * `.switchyard/settings.local.json`. With no `PermissionPrompt` service, or
 * one that reports no terminal, an ask is a denial that says how to allow the
 * call. Every decision names its source: `hook`, `rule`, `session`, `tool`, `sandbox`,
 * `mode`, `classifier` or `user`.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as DispatchEvent from "./DispatchEvent.js"
import * as PermissionContext from "./PermissionContext.js"
import * as PermissionRules from "./PermissionRules.js"
import * as Permissions from "./Permissions.js"
import * as Sandbox from "./Sandbox.js"
import * as Settings from "./Settings.js"
import type * as Tool from "./Tool.js"
import type * as ToolUseContext from "./ToolUseContext.js"

/**
 * What the classifier and the user are asked about.
 *
 * @since 0.1.0
 * @category models
 */
export interface Question {
  readonly tool: Tool.Any
  readonly toolUseId: string
  readonly input: unknown
  readonly context: ToolUseContext.ToolUseContext
  /** Why the call needs approval. */
  readonly message: string
  /** The rules an "always" answer would add. */
  readonly suggestions: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ClassifierDecision {
  readonly behavior: "allow" | "deny"
  readonly reason: string
}

/**
 * The `auto` mode classifier port: allows or denies what would otherwise ask.
 *
 * @since 0.1.0
 * @category services
 */
export class PermissionClassifier extends Context.Tag("@switchyard/core/PermissionChain/PermissionClassifier")<
  PermissionClassifier,
  { readonly classify: (question: Question) => Effect.Effect<ClassifierDecision> }
>() {}

/**
 * A user's answer. `yes` may replace the input (a permission prompt tool's
 * `updatedInput`; it is validated again). `no` without feedback ends the
 * turn; with feedback the model is told what the user said and goes on, as
 * in Claude Code. `deny`: a programmatic answer (a permission prompt tool)
 * with the message for the model; `interrupt` ends the turn too.
 * `unavailable`: nobody can be asked (no terminal).
 *
 * @since 0.1.0
 * @category models
 */
export type PromptAnswer =
  | { readonly answer: "yes"; readonly updatedInput?: unknown }
  | { readonly answer: "no"; readonly feedback?: string | undefined }
  | { readonly answer: "deny"; readonly message: string; readonly interrupt: boolean }
  | { readonly answer: "always"; readonly persist: boolean }
  | { readonly answer: "unavailable"; readonly reason: string }

/**
 * The user prompt port (the CLI provides a terminal prompt; tests a scripted one).
 *
 * @since 0.1.0
 * @category services
 */
export class PermissionPrompt extends Context.Tag("@switchyard/core/PermissionChain/PermissionPrompt")<
  PermissionPrompt,
  { readonly ask: (question: Question) => Effect.Effect<PromptAnswer> }
>() {}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Where "always" rules are persisted (`<projectDir>/.switchyard/settings.local.json`); default: the call's cwd. */
  readonly projectDir?: string
  /** The home directory for `~/` rules (default `$HOME`). */
  readonly home?: string
  /**
   * How paths are resolved for the rules: `"kernel"` (default), the disk's
   * `realpath(3)`, as the tools will open them; `"fileSystem"`, through the
   * `FileSystem` in context (one that is not the disk's).
   */
  readonly realPaths?: "kernel" | "fileSystem"
  /**
   * The sentence a denial of an ask ends with, saying how to allow the call
   * (the suggested rules given). The default speaks of settings files and
   * permission modes; a CLI names its flags.
   */
  readonly howToAllow?: ((suggestions: ReadonlyArray<string>) => string) | undefined
}

/**
 * The chain as a service, with its session rules ("always" answers) visible.
 *
 * @since 0.1.0
 * @category models
 */
export interface PermissionChain extends Permissions.Service {
  readonly sessionRules: Effect.Effect<ReadonlyArray<PermissionContext.PermissionRule>>
}

/**
 * The predicate the registry uses to hide fully denied tools (SPEC §4.2 step
 * 3), with the Read and Edit families: a blanket `Read` deny hides Glob and
 * Grep too.
 *
 * @since 0.1.0
 * @category predicates
 */
export const blanketDenyPredicate = (
  context: PermissionContext.PermissionContext
): (toolName: string) => boolean =>
(toolName) => PermissionRules.isBlanketDenied(context, toolName)

type UpdatedInput = { readonly input: unknown; readonly source: string } | undefined

const allow = (
  source: Permissions.DecisionSource,
  reason: string | undefined,
  updatedInput: UpdatedInput
): Permissions.PermissionDecision => ({ behavior: "allow", source, reason, updatedInput })

const deny = (
  source: Permissions.DecisionSource,
  message: string,
  rejectedByUser?: boolean
): Permissions.PermissionDecision =>
  rejectedByUser ? { behavior: "deny", source, message, rejectedByUser } : { behavior: "deny", source, message }

const describeRule = (rule: PermissionContext.PermissionRule): string => `"${rule.raw.trim()}" (${rule.source})`

/**
 * How to allow a call, in library words: a settings rule or another
 * permission mode.
 *
 * @since 0.1.0
 * @category formatting
 */
export const howToAllow = (suggestions: ReadonlyArray<string>): string => {
  const example = suggestions[0] ?? "Tool(specifier)"
  return `To allow it, add a rule such as ${JSON.stringify(example)} to permissions.allow in ` +
    `.switchyard/settings.json (or .claude/settings.json), or use another permission mode (acceptEdits, ` +
    `bypassPermissions).`
}

/**
 * Build the chain.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<PermissionChain, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const fileSystem = yield* FileSystem.FileSystem
    const platform = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
    const home = options.home ?? (yield* Settings.homeDirectory)
    const hint = options.howToAllow ?? howToAllow
    const session = yield* Ref.make<ReadonlyArray<PermissionContext.PermissionRule>>([])
    // "Always" answers of parallel calls must not interleave their file writes.
    const writeLock = yield* Effect.makeSemaphore(1)

    const persist = (projectDir: string, rules: ReadonlyArray<string>) =>
      writeLock.withPermits(1)(Settings.addRules({ projectDir, behavior: "allow", rules })).pipe(
        Effect.provide(platform),
        Effect.either
      )

    const askUser = (
      request: Permissions.PermissionRequest,
      input: unknown,
      message: string,
      suggestions: ReadonlyArray<string>,
      updatedInput: UpdatedInput
    ): Effect.Effect<Permissions.PermissionDecision> =>
      Effect.gen(function*() {
        const { context, tool } = request
        if (context.permissions.mode === "dontAsk") {
          return deny(
            "mode",
            `Permission to use ${tool.name} was denied: ${message}, and permission mode dontAsk denies ` +
              `whatever is not allowed in advance. ${hint(suggestions)}`
          )
        }
        const prompt = yield* Effect.serviceOption(PermissionPrompt)
        if (Option.isNone(prompt)) {
          return deny(
            "user",
            `Permission to use ${tool.name} requires approval (${message}), and no one can be asked in this ` +
              `session. ${hint(suggestions)}`
          )
        }
        const question: Question = { tool, toolUseId: request.toolUseId, input, context, message, suggestions }
        yield* request.emit(DispatchEvent.PermissionRequested({
          toolUseId: request.toolUseId,
          name: tool.name,
          input,
          message,
          at: yield* Clock.currentTimeMillis
        }))
        // The time blocked on the user is its own span under the call's `execute_tool` span.
        const answer = yield* prompt.value.ask(question).pipe(
          Effect.tap((answer) => Effect.annotateCurrentSpan("switchyard.permission.answer", answer.answer)),
          Effect.withSpan(`await_permission ${tool.name}`, {
            kind: "internal",
            attributes: { "gen_ai.tool.name": tool.name, "gen_ai.tool.call.id": request.toolUseId }
          })
        )
        switch (answer.answer) {
          case "yes":
            return allow(
              "user",
              "approved by the user",
              answer.updatedInput === undefined
                ? updatedInput
                : { input: answer.updatedInput, source: "the permission prompt's updatedInput" }
            )
          case "no":
            // Rejected with feedback: the model hears it and goes on; without, the turn ends (SPEC §4.9).
            return answer.feedback !== undefined && answer.feedback.trim() !== ""
              ? deny(
                "user",
                `The user doesn't want to proceed with this ${tool.name} call; it was rejected (nothing it would ` +
                  `have changed was changed). To tell you how to proceed, the user said:\n${answer.feedback.trim()}`
              )
              : deny("user", `The user rejected this ${tool.name} call.`, true)
          case "deny":
            return deny("user", answer.message, answer.interrupt)
          case "unavailable":
            return deny(
              "user",
              `Permission to use ${tool.name} requires approval (${message}), and no one can be asked: ` +
                `${answer.reason}. ${hint(suggestions)}`
            )
          case "always": {
            const added = suggestions.flatMap((raw) => {
              const rule = PermissionContext.parseRule(raw, "allow", "session", context.cwd)
              return rule === undefined ? [] : [rule]
            })
            yield* Ref.update(session, (rules) => [
              ...rules,
              ...added.filter((rule) => !rules.some((existing) => existing.raw === rule.raw))
            ])
            if (added.length === 0) {
              return allow(
                "user",
                "approved by the user; no narrower rule describes this call, so it will be asked again",
                updatedInput
              )
            }
            if (!answer.persist) {
              return allow("user", `approved by the user for this session: ${suggestions.join(", ")}`, updatedInput)
            }
            const written = yield* persist(options.projectDir ?? context.cwd, added.map((rule) => rule.raw))
            return allow(
              "user",
              Either.isRight(written)
                ? `approved by the user; saved ${suggestions.join(", ")} to ${written.right}`
                : `approved by the user for this session; saving the rule failed: ` +
                  `${written.left.path}: ${written.left.message}`,
              updatedInput
            )
          }
        }
      })

    // The working directories' and home's real paths, resolved once for the chain.
    const directoryRealPaths = new Map<string, string>()
    const decide = (request: Permissions.PermissionRequest): Effect.Effect<Permissions.PermissionDecision> =>
      Effect.gen(function*() {
        const { context, hook, tool } = request
        // 1. A hook's block always wins.
        if (hook.decision === "deny") {
          return deny("hook", hook.reason ?? `Blocked by a PreToolUse hook`)
        }
        // Rules judge the input that will run: a hook's replacement, if any.
        const input = hook.updatedInput !== undefined ? hook.updatedInput.input : request.input
        const permissions = context.permissions
        const mode = permissions.mode
        const env = PermissionRules.makeEnvironment({
          cwd: context.cwd,
          home,
          additionalDirectories: permissions.additionalDirectories,
          path,
          fileSystem,
          realPaths: options.realPaths ?? "kernel",
          directoryRealPaths
        })
        const sessionRules = yield* Ref.get(session)
        const assessment = yield* PermissionRules.assess(
          { tool, input, context },
          { ruleSets: [permissions.rules, sessionRules], env }
        )

        // 2. Deny rules.
        if (assessment.match?.behavior === "deny") {
          const { rule, subject } = assessment.match
          return deny(
            "rule",
            `Permission to use ${tool.name} on ${subject} has been denied by the rule ${describeRule(rule)}.`
          )
        }
        // 3. The tool's own check.
        const check = yield* Effect.suspend(() => tool.checkPermissions(input, context)).pipe(
          Effect.catchAllDefect((defect) =>
            Effect.succeed<PermissionContext.ToolPermissionCheck>({
              behavior: "deny",
              message: `${tool.name} could not check its permissions: ${String(defect)}`
            })
          )
        )
        if (check.behavior === "deny") return deny("tool", check.message)
        // 4. Plan mode runs read-only calls only.
        if (mode === "plan" && !assessment.readOnly) {
          return deny(
            "mode",
            `Plan mode is on: only read-only tools may run, and this ${tool.name} call would change something. ` +
              `Finish the plan and present it; the user leaves plan mode to carry it out.`
          )
        }
        const updatedInput = hook.updatedInput ??
          (check.behavior === "allow" && check.updatedInput !== undefined
            ? { input: check.updatedInput, source: `${tool.name}.checkPermissions` }
            : undefined)
        // How this Bash call would run: in the sandbox, which enforces Read and Edit deny rules itself.
        const bash = tool.name === "Bash" ? Sandbox.bashCallOf(input) : undefined
        const sandbox = yield* Sandbox.Sandbox
        const sandboxMode = bash === undefined ? undefined : yield* Sandbox.modeOf(sandbox, bash, "permission")
        // 5. Ask rules and a hook's ask go to the user, whatever the mode. Not the ask a deny rule makes of a path
        // that cannot be resolved ahead of time, when the sandbox enforces that rule on the real paths.
        if (
          assessment.match?.behavior === "ask" &&
          !(sandboxMode?._tag === "Sandboxed" && Sandbox.enforcesRule(assessment.match.rule))
        ) {
          const { rule, subject } = assessment.match
          const message = `the rule ${describeRule(rule)} asks before ${tool.name} on ${subject}`
          return yield* askUser(request, input, message, assessment.suggestions, updatedInput)
        }
        if (sandboxMode?._tag === "Refused") return deny("sandbox", sandboxMode.message)
        if (hook.decision === "ask") {
          const message = hook.reason ?? "a PreToolUse hook asks for approval"
          return yield* askUser(request, input, message, assessment.suggestions, updatedInput)
        }
        if (sandboxMode?._tag === "Unsandboxed" && sandboxMode.reason === "requested") {
          const message = "the command asks to run outside the sandbox (dangerouslyDisableSandbox)"
          return yield* askUser(request, input, message, assessment.suggestions, updatedInput)
        }
        // 6. A hook's allow skips the default asks.
        if (hook.decision === "allow") return allow("hook", hook.reason, updatedInput)

        let reason = assessment.reason
        // No rule skips the tool's own ask, so none is offered to "always allow" it.
        const suggestions = check.behavior === "ask" ? [] : assessment.suggestions
        if (check.behavior === "ask") {
          // 7. The tool asks: only bypassPermissions skips it.
          if (mode === "bypassPermissions") return allow("mode", "bypassPermissions", updatedInput)
          reason = check.message
        } else {
          // 8. Allow rules and the read-only set.
          if (assessment.allowed) {
            const rules = assessment.allowRules
            if (rules.length === 0) return allow("mode", "read-only", updatedInput)
            return allow(
              rules.every((rule) => rule.source === "session") ? "session" : "rule",
              `allowed by ${rules.map(describeRule).join(", ")}`,
              updatedInput
            )
          }
          // The sandbox enforces what the rules would ask about.
          if (sandboxMode?._tag === "Sandboxed" && sandbox.settings.autoAllowBashIfSandboxed) {
            return allow("sandbox", "runs in the sandbox (sandbox.autoAllowBashIfSandboxed)", updatedInput)
          }
          // 9. Modes that allow more.
          if (mode === "bypassPermissions") return allow("mode", "bypassPermissions", updatedInput)
          if (mode === "acceptEdits" && assessment.allowedWithEdits) return allow("mode", "acceptEdits", updatedInput)
        }
        // 10. It would ask.
        if (mode === "auto") {
          const classifier = yield* Effect.serviceOption(PermissionClassifier)
          if (Option.isSome(classifier)) {
            const verdict = yield* classifier.value.classify({
              tool,
              toolUseId: request.toolUseId,
              input,
              context,
              message: reason,
              suggestions
            })
            return verdict.behavior === "allow"
              ? allow("classifier", verdict.reason, updatedInput)
              : deny("classifier", `The permission classifier denied this ${tool.name} call: ${verdict.reason}`)
          }
        }
        return yield* askUser(request, input, reason, suggestions, updatedInput)
      })

    return { decide, sessionRules: Ref.get(session) }
  })

/**
 * The chain as the engine's `PermissionPolicy`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<Permissions.PermissionPolicy, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(Permissions.PermissionPolicy, make(options))
