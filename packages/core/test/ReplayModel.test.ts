import { Messages, Model, ReplayModel } from "@switchyard/core"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as path from "node:path"

const fixture = path.join(__dirname, "../../../test/fixtures/transcripts/read-then-answer.json")

const request = (...messages: ReadonlyArray<Messages.Message>): Model.ModelRequest => ({ messages, tools: [] })
const user = (...content: ReadonlyArray<Messages.ContentBlock>): Messages.Message => ({ role: "user", content })
const assistant = (...content: ReadonlyArray<Messages.ContentBlock>): Messages.Message => ({
  role: "assistant",
  content
})

const run = (model: Model.Service, req: Model.ModelRequest) =>
  Stream.runCollect(model.stream(req)).pipe(Effect.map(Chunk.toReadonlyArray))

/** Assembles a `tool_use` input from its `input_json_delta` fragments. */
const assembledInput = (events: ReadonlyArray<Model.ModelStreamEvent>, index: number): unknown =>
  JSON.parse(
    events.flatMap((event) =>
      event.type === "content_block_delta" && event.index === index && event.delta.type === "input_json_delta"
        ? [event.delta.partial_json]
        : []
    ).join("")
  )

const twoToolTurn: ReplayModel.Turn = {
  blocks: [
    { block: Messages.toolUse("toolu_a", "Read", { file_path: "/a" }) },
    { block: Messages.toolUse("toolu_b", "Read", { file_path: "/b" }) }
  ]
}
const answerTurn: ReplayModel.Turn = { blocks: [{ block: Messages.text("done") }] }
const firstRequest = request(user(Messages.text("go")))
const afterTools = (...results: ReadonlyArray<Messages.ToolResultBlock>) =>
  request(
    user(Messages.text("go")),
    assistant(
      Messages.toolUse("toolu_a", "Read", { file_path: "/a" }),
      Messages.toolUse("toolu_b", "Read", { file_path: "/b" })
    ),
    user(...results)
  )

describe("ReplayModel (SPEC §4.11)", () => {
  describe("event sequence", () => {
    it.effect("a turn replays as the exact Anthropic event sequence, text and input JSON chunked", () =>
      Effect.gen(function*() {
        const input = { file_path: "/work/src/main.ts", offset: 10, limit: 20 }
        const model = yield* ReplayModel.make({
          turns: [{
            blocks: [
              { block: Messages.text("Hello there!") },
              { block: Messages.toolUse("toolu_1", "Read", input), chunks: 5 }
            ],
            usage: { input_tokens: 100, output_tokens: 25 }
          }]
        })
        const events = yield* run(model, firstRequest)
        const json = JSON.stringify(input)
        const fragments = events.flatMap((e) =>
          e.type === "content_block_delta" && e.delta.type === "input_json_delta" ? [e.delta.partial_json] : []
        )
        expect(fragments).toHaveLength(5)
        expect(fragments.join("")).toBe(json)
        expect(events).toEqual([
          {
            type: "message_start",
            message: {
              id: "msg_replay_1",
              model: "replay",
              role: "assistant",
              usage: { input_tokens: 100, output_tokens: 0 }
            }
          },
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hell" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "o th" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ere!" } },
          { type: "content_block_stop", index: 0 },
          {
            type: "content_block_start",
            index: 1,
            content_block: { type: "tool_use", id: "toolu_1", name: "Read", input: {} }
          },
          ...fragments.map((partial_json) => ({
            type: "content_block_delta",
            index: 1,
            delta: { type: "input_json_delta", partial_json }
          })),
          { type: "content_block_stop", index: 1 },
          {
            type: "message_delta",
            delta: { stop_reason: "tool_use", stop_sequence: null },
            usage: { input_tokens: 100, output_tokens: 25 }
          },
          { type: "message_stop" }
        ])
        expect(assembledInput(events, 1)).toEqual(input)
        // Every replayed event decodes as a ModelStreamEvent, unchanged.
        expect(Schema.decodeUnknownSync(Schema.Array(Model.ModelStreamEvent))(events)).toEqual(events)
      }))

    it.effect("a turn without tool_use stops with end_turn; an explicit stop_reason wins", () =>
      Effect.gen(function*() {
        const model = yield* ReplayModel.make({
          turns: [
            { blocks: [{ block: Messages.text("hi") }] },
            { blocks: [{ block: Messages.text("cut") }], stop_reason: "max_tokens" }
          ]
        })
        const stopOf = (events: ReadonlyArray<Model.ModelStreamEvent>) =>
          events.flatMap((e) => (e.type === "message_delta" ? [e.delta.stop_reason] : []))
        expect(stopOf(yield* run(model, firstRequest))).toEqual(["end_turn"])
        expect(stopOf(yield* run(model, firstRequest))).toEqual(["max_tokens"])
      }))

    it.effect("thinking streams as thinking_deltas and one signature_delta; short text is not over-split", () =>
      Effect.gen(function*() {
        const model = yield* ReplayModel.make({
          turns: [{
            blocks: [
              { block: { type: "thinking", thinking: "abcdef", signature: "sig" }, chunks: 2 },
              { block: Messages.text("ok"), chunks: 10 }
            ]
          }]
        })
        const deltas = (yield* run(model, firstRequest)).flatMap((e) => (e.type === "content_block_delta" ? [e] : []))
        expect(deltas.map((e) => [e.index, e.delta])).toEqual([
          [0, { type: "thinking_delta", thinking: "abc" }],
          [0, { type: "thinking_delta", thinking: "def" }],
          [0, { type: "signature_delta", signature: "sig" }],
          [1, { type: "text_delta", text: "o" }],
          [1, { type: "text_delta", text: "k" }]
        ])
      }))
  })

  describe("delays", () => {
    it.effect("delayMs waits before each block and chunkDelayMs between deltas, on the Clock", () =>
      Effect.gen(function*() {
        const model = yield* ReplayModel.make({
          turns: [{
            blocks: [
              { block: Messages.text("abc"), delayMs: 100 },
              {
                block: Messages.toolUse("toolu_1", "Read", { file_path: "/x" }),
                delayMs: 150,
                chunks: 3,
                chunkDelayMs: 10
              }
            ]
          }]
        })
        const fiber = yield* model.stream(firstRequest).pipe(
          Stream.mapEffect((event) => Effect.map(Clock.currentTimeMillis, (at) => [event.type, at] as const)),
          Stream.runCollect,
          Effect.fork
        )
        yield* TestClock.adjust(99)
        expect(fiber.unsafePoll()).toBeNull()
        yield* TestClock.adjust(1_000)
        const timed = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
        expect(timed).toEqual([
          ["message_start", 0],
          ["content_block_start", 100],
          ["content_block_delta", 100],
          ["content_block_delta", 100],
          ["content_block_delta", 100],
          ["content_block_stop", 100],
          ["content_block_start", 250],
          ["content_block_delta", 250],
          ["content_block_delta", 260],
          ["content_block_delta", 270],
          ["content_block_stop", 270],
          ["message_delta", 270],
          ["message_stop", 270]
        ])
      }))
  })

  describe("divergence", () => {
    it.effect("asking for more turns than the transcript has fails with reason replay", () =>
      Effect.gen(function*() {
        const model = yield* ReplayModel.make({ turns: [answerTurn] })
        yield* run(model, firstRequest)
        const error = yield* Effect.flip(run(model, firstRequest))
        expect(error).toBeInstanceOf(Model.ModelError)
        expect(error.reason).toBe("replay")
        expect(error.retryable).toBe(false)
        expect(error.message).toContain("turn 2")
        expect(error.message).toContain("only 1 turn")
      }))

    it.effect("the next request must carry one tool_result per tool_use, in call order", () =>
      Effect.gen(function*() {
        const model = yield* ReplayModel.make({ turns: [twoToolTurn, answerTurn] })
        yield* run(model, firstRequest)

        const missing = yield* Effect.flip(run(model, afterTools(Messages.toolResult("toolu_a", "ok"))))
        expect(missing.reason).toBe("replay")
        expect(missing.message).toContain("turn 2")
        expect(missing.message).toContain("tool_results [toolu_a]")
        expect(missing.message).toContain("asked for [toolu_a, toolu_b]")

        const misordered = yield* Effect.flip(
          run(model, afterTools(Messages.toolResult("toolu_b", "ok"), Messages.toolResult("toolu_a", "ok")))
        )
        expect(misordered.message).toContain("tool_results [toolu_b, toolu_a]")

        // A divergent request does not consume the turn: the right one still gets it.
        const events = yield* run(
          model,
          afterTools(Messages.toolResult("toolu_a", "ok"), Messages.toolResult("toolu_b", "ok"))
        )
        expect(events.at(-1)).toEqual({ type: "message_stop" })
      }))

    it.effect("an expect that does not hold fails, naming what differed", () =>
      Effect.gen(function*() {
        const model = yield* ReplayModel.make({
          turns: [
            { expect: { user_text_includes: "fix the bug" }, ...twoToolTurn },
            {
              expect: { tool_results: [{ tool_use_id: "toolu_a" }, { tool_use_id: "toolu_b", is_error: true }] },
              ...answerTurn
            }
          ]
        })
        const wrongText = yield* Effect.flip(run(model, request(user(Messages.text("add a feature")))))
        expect(wrongText.message).toContain("turn 1")
        expect(wrongText.message).toContain("\"fix the bug\"")
        expect(wrongText.message).toContain("\"add a feature\"")

        yield* run(model, request(user(Messages.text("please fix the bug"))))
        const notAnError = yield* Effect.flip(
          run(model, afterTools(Messages.toolResult("toolu_a", "ok"), Messages.toolResult("toolu_b", "ok")))
        )
        expect(notAnError.message).toContain("turn 2")
        expect(notAnError.message).toContain("toolu_b to have is_error true, got false")

        yield* run(
          model,
          afterTools(Messages.toolResult("toolu_a", "ok"), Messages.toolResult("toolu_b", "no such file", true))
        )
      }))
  })

  describe("transcript files", () => {
    it.scoped("layerFile replays a transcript file turn by turn", () =>
      Effect.gen(function*() {
        const model = yield* Layer.build(ReplayModel.layerFile(fixture)).pipe(
          Effect.map(Context.get(Model.LanguageModel))
        )
        // The fixture's delays run on the TestClock.
        const replay = (req: Model.ModelRequest) =>
          Effect.fork(run(model, req)).pipe(Effect.tap(() => TestClock.adjust(10_000)), Effect.flatMap(Fiber.join))
        const first = yield* replay(request(user(Messages.text("What does a.txt say?"))))
        expect(first[0]).toMatchObject({ type: "message_start", message: { model: "replay-fixture" } })
        expect(assembledInput(first, 2)).toEqual({ file_path: "/work/a.txt" })
        expect(assembledInput(first, 3)).toEqual({ file_path: "/work/b.txt", limit: 20 })
        const second = yield* replay(
          request(
            user(Messages.text("What does a.txt say?")),
            assistant(
              Messages.toolUse("toolu_read_a", "Read", { file_path: "/work/a.txt" }),
              Messages.toolUse("toolu_read_b", "Read", { file_path: "/work/b.txt", limit: 20 })
            ),
            user(
              Messages.toolResult("toolu_read_a", "     1\thello"),
              Messages.toolResult("toolu_read_b", "File does not exist.", true)
            )
          )
        )
        expect(
          second.flatMap((e) => e.type === "content_block_delta" && e.delta.type === "text_delta" ? [e.delta.text] : [])
            .join("")
        )
          .toBe("a.txt says hello; b.txt does not exist.")
      }).pipe(Effect.provide(NodeContext.layer)))

    it.scoped("a transcript with a bad field is reported with its path and field", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* fs.makeTempDirectoryScoped()
        const badValue = path.join(dir, "bad-value.json")
        yield* fs.writeFileString(
          badValue,
          JSON.stringify({
            turns: [{
              blocks: [{ block: { type: "text", text: "hi" } }, { block: { type: "text", text: "x" }, delayMs: "soon" }]
            }]
          })
        )
        const valueError = yield* Effect.flip(ReplayModel.load(badValue))
        expect(valueError._tag).toBe("TranscriptError")
        expect(valueError.path).toBe(badValue)
        expect(valueError.message).toContain(badValue)
        expect(valueError.message).toContain("turns[0].blocks[1].delayMs")

        const typo = path.join(dir, "typo.json")
        yield* fs.writeFileString(typo, JSON.stringify({ turns: [{ blocks: [], stop_reasn: "end_turn" }] }))
        expect((yield* Effect.flip(ReplayModel.load(typo))).message).toContain("turns[0].stop_reasn")

        const notJson = path.join(dir, "not-json.json")
        yield* fs.writeFileString(notJson, "{ \"turns\": [")
        expect((yield* Effect.flip(ReplayModel.load(notJson))).message).toContain("not valid JSON")

        const missing = yield* Effect.flip(Layer.build(ReplayModel.layerFile(path.join(dir, "missing.json"))))
        expect(missing.message).toContain("missing.json: cannot read transcript")
      }).pipe(Effect.provide(NodeContext.layer)))
  })
})
