/**
 * The index of registered footprints that the streaming executor asks "which
 * earlier calls does this one conflict with?" (SPEC §4.13). Paths live in a
 * trie by segment, so a lookup costs the path's depth plus the conflicts it
 * finds, not a scan of every pending call. `"*"` is kept apart: a call that
 * writes `*` conflicts with everything registered before it, and later calls
 * only need to find that one call (it waits for all the others).
 *
 * @internal
 */
import * as Footprint from "../Footprint.js"

/**
 * An earlier call a new one conflicts with, and why (the earlier call's
 * access). `data`: the earlier call writes what the new one reads or writes
 * (the new one depends on it); otherwise the new one only writes what the
 * earlier one reads.
 */
export interface Conflict<T> {
  readonly call: T
  readonly reason: string
  readonly data: boolean
}

interface Access<T> {
  readonly call: T
  readonly resource: string
}

class TrieNode<T> {
  readonly children = new Map<string, TrieNode<T>>()
  readonly readers = new Map<T, string>()
  readonly writers = new Map<T, string>()
  /** Entries in this node and below, so empty branches are pruned and skipped. */
  size = 0
  constructor(readonly parent: TrieNode<T> | undefined, readonly segment: string) {}
}

interface Registration<T> {
  readonly paths: ReadonlyArray<readonly [TrieNode<T>, "r" | "w"]>
  readonly named: ReadonlyArray<readonly [string, "r" | "w"]>
}

const emptyRegistration: Registration<never> = { paths: [], named: [] }

/** Calls registered, by the footprints they declared. */
export class FootprintIndex<T> {
  private readonly root = new TrieNode<T>(undefined, "")
  private readonly named = new Map<string, { readers: Map<T, string>; writers: Map<T, string> }>()
  private readonly registrations = new Map<T, Registration<T>>()
  private lastStarWriter: T | undefined
  /** Everything registered since `lastStarWriter` (a new `*` writer conflicts with all of it). */
  private sinceStarWrite: Array<Access<T>> = []
  /** Readers of `*` since `lastStarWriter` (any writer conflicts with them). */
  private starReaders: Array<T> = []
  /** Writers of anything but `*` since `lastStarWriter` (a `*` reader conflicts with them). */
  private writersSinceStar: Array<Access<T>> = []

  has(call: T): boolean {
    return this.registrations.has(call)
  }

  /** The registered calls `footprint` conflicts with, then register it. */
  add(call: T, footprint: Footprint.Footprint): Array<Conflict<T>> {
    // The fail-closed footprints of calls without a declaration: the common case, kept cheap.
    if (footprint === Footprint.readsEverything) return this.addStarReader(call)
    return this.addDeclared(call, footprint)
  }

  private addStarReader(call: T): Array<Conflict<T>> {
    const found: Array<Conflict<T>> = []
    const writer = this.lastStarWriter
    if (writer !== undefined && this.registrations.has(writer)) {
      found.push({ call: writer, reason: "writes *", data: true })
    }
    if (this.writersSinceStar.length > 0) {
      this.writersSinceStar = this.writersSinceStar.filter((a) => this.registrations.has(a.call))
      for (const access of this.writersSinceStar) {
        found.push({ call: access.call, reason: `writes ${access.resource}`, data: true })
      }
    }
    this.registrations.set(call, emptyRegistration)
    this.starReaders.push(call)
    this.sinceStarWrite.push({ call, resource: "reads *" })
    return found
  }

  private addDeclared(call: T, footprint: Footprint.Footprint): Array<Conflict<T>> {
    const found = new Map<T, Conflict<T>>()
    // The first reason found is kept, unless a data dependence turns up later: it is the one to show.
    const note = (other: T, reason: string) => {
      if (other === call || !this.registrations.has(other)) return
      const known = found.get(other)
      const data = reason.startsWith("writes ")
      if (known === undefined || (data && !known.data)) found.set(other, { call: other, reason, data })
    }
    const reads = (footprint.reads ?? []).map((r) => [r, Footprint.toKey(r)] as const)
    const writes = (footprint.writes ?? []).map((w) => [w, Footprint.toKey(w)] as const)
    const writesStar = writes.some(([, k]) => k._tag === "Everything")
    const readsStar = reads.some(([, k]) => k._tag === "Everything")
    // A call that touches nothing (`sleep 1`) conflicts with nothing.
    if (reads.length === 0 && writes.length === 0) {
      this.registrations.set(call, { paths: [], named: [] })
      return []
    }

    if (this.lastStarWriter !== undefined) note(this.lastStarWriter, "writes *")
    if (writesStar) {
      for (const access of this.sinceStarWrite) note(access.call, access.resource)
    } else {
      if (readsStar) {
        this.writersSinceStar = this.writersSinceStar.filter((a) => this.registrations.has(a.call))
        for (const access of this.writersSinceStar) note(access.call, `writes ${access.resource}`)
      }
      if (writes.length > 0) {
        this.starReaders = this.starReaders.filter((c) => this.registrations.has(c))
        for (const reader of this.starReaders) note(reader, "reads *")
      }
      for (const [, key] of writes) this.collect(key, true, note)
      for (const [, key] of reads) if (key._tag !== "Everything") this.collect(key, false, note)
    }

    // Register.
    const paths: Array<readonly [TrieNode<T>, "r" | "w"]> = []
    const named: Array<readonly [string, "r" | "w"]> = []
    if (writesStar) {
      this.lastStarWriter = call
      this.sinceStarWrite = []
      this.starReaders = []
      this.writersSinceStar = []
    } else {
      const register = (resource: string, key: Footprint.Key, mode: "r" | "w") => {
        if (key._tag === "Everything") return
        if (key._tag === "Named") {
          let entry = this.named.get(key.name)
          if (entry === undefined) {
            entry = { readers: new Map(), writers: new Map() }
            this.named.set(key.name, entry)
          }
          ;(mode === "r" ? entry.readers : entry.writers).set(call, resource)
          named.push([key.name, mode])
          return
        }
        let node = this.root
        for (const segment of key.segments) {
          let next = node.children.get(segment)
          if (next === undefined) {
            next = new TrieNode(node, segment)
            node.children.set(segment, next)
          }
          node = next
        }
        const map = mode === "r" ? node.readers : node.writers
        if (map.has(call)) return
        map.set(call, resource)
        for (let n: TrieNode<T> | undefined = node; n !== undefined; n = n.parent) n.size++
        paths.push([node, mode])
      }
      for (const [resource, key] of reads) register(resource, key, "r")
      for (const [resource, key] of writes) register(resource, key, "w")
      if (readsStar) this.starReaders.push(call)
      const firstWrite = writes[0]
      if (firstWrite !== undefined) this.writersSinceStar.push({ call, resource: firstWrite[0] })
      const described = firstWrite !== undefined
        ? `writes ${firstWrite[0]}`
        : reads[0] !== undefined
        ? `reads ${reads[0][0]}`
        : undefined
      if (described !== undefined) this.sinceStarWrite.push({ call, resource: described })
    }
    this.registrations.set(call, { paths, named })
    return Array.from(found.values())
  }

  /** Forget a call: nothing later conflicts with it any more. */
  remove(call: T): void {
    const registration = this.registrations.get(call)
    if (registration === undefined) return
    this.registrations.delete(call)
    if (this.lastStarWriter === call) this.lastStarWriter = undefined
    for (const [node, mode] of registration.paths) {
      ;(mode === "r" ? node.readers : node.writers).delete(call)
      let n: TrieNode<T> | undefined = node
      while (n !== undefined) {
        n.size--
        const parent: TrieNode<T> | undefined = n.parent
        if (n.size === 0 && parent !== undefined) parent.children.delete(n.segment)
        n = parent
      }
    }
    for (const [name, mode] of registration.named) {
      const entry = this.named.get(name)
      if (entry === undefined) continue
      ;(mode === "r" ? entry.readers : entry.writers).delete(call)
      if (entry.readers.size === 0 && entry.writers.size === 0) this.named.delete(name)
    }
    // The `*` lists are pruned lazily, when they are next read.
    if (this.sinceStarWrite.length > 64 && this.sinceStarWrite.length > 2 * this.registrations.size) {
      this.sinceStarWrite = this.sinceStarWrite.filter((a) => this.registrations.has(a.call))
    }
    if (this.starReaders.length > 64 && this.starReaders.length > 2 * this.registrations.size) {
      this.starReaders = this.starReaders.filter((c) => this.registrations.has(c))
    }
  }

  /** Registered accesses overlapping `key`: writers only, or readers too when `asWriter`. */
  private collect(key: Footprint.Key, asWriter: boolean, note: (call: T, reason: string) => void): void {
    if (key._tag === "Everything") return
    if (key._tag === "Named") {
      const entry = this.named.get(key.name)
      if (entry === undefined) return
      for (const [call, resource] of entry.writers) note(call, `writes ${resource}`)
      if (asWriter) { for (const [call, resource] of entry.readers) note(call, `reads ${resource}`) }
      return
    }
    // Ancestors and the node itself.
    let node: TrieNode<T> | undefined = this.root
    const visit = (n: TrieNode<T>) => {
      for (const [call, resource] of n.writers) note(call, `writes ${resource}`)
      if (asWriter) { for (const [call, resource] of n.readers) note(call, `reads ${resource}`) }
    }
    for (const segment of key.segments) {
      visit(node)
      node = node.children.get(segment)
      if (node === undefined) return
    }
    // The node and everything under it.
    const stack: Array<TrieNode<T>> = [node]
    while (stack.length > 0) {
      const n = stack.pop()!
      if (n.size === 0) continue
      visit(n)
      for (const child of n.children.values()) stack.push(child)
    }
  }
}
