/**
 * A priority queue of calls by their position in the turn, so that calls
 * ready at the same time start (and are yielded) in call order. Calls mostly
 * become ready in call order, so those go to a plain FIFO; only calls that
 * arrive out of order pay for the binary heap.
 *
 * @internal
 */
export class CallHeap<T extends { readonly index: number }> {
  private readonly items: Array<T> = []
  private fifo: Array<T> = []
  private head = 0

  get size(): number {
    return this.items.length + this.fifo.length - this.head
  }

  push(item: T): void {
    const fifo = this.fifo
    if (this.items.length === 0 && (this.head === fifo.length || fifo[fifo.length - 1]!.index < item.index)) {
      fifo.push(item)
      return
    }
    this.pushHeap(item)
  }

  pop(): T | undefined {
    const fifo = this.fifo
    const first = this.head < fifo.length ? fifo[this.head] : undefined
    const top = this.items[0]
    if (first !== undefined && (top === undefined || first.index < top.index)) {
      this.head++
      if (this.head === fifo.length) {
        this.fifo = []
        this.head = 0
      } else if (this.head > 1024 && this.head * 2 > fifo.length) {
        this.fifo = fifo.slice(this.head)
        this.head = 0
      }
      return first
    }
    return this.popHeap()
  }

  private pushHeap(item: T): void {
    const items = this.items
    items.push(item)
    let i = items.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (items[parent]!.index <= item.index) break
      items[i] = items[parent]!
      i = parent
    }
    items[i] = item
  }

  private popHeap(): T | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (top === undefined || last === undefined || items.length === 0) return top
    let i = 0
    const n = items.length
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && items[right]!.index < items[left]!.index ? right : left
      if (items[child]!.index >= last.index) break
      items[i] = items[child]!
      i = child
    }
    items[i] = last
    return top
  }
}
