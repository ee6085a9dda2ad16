/**
 * A binary min-heap of calls by their position in the turn, so that calls
 * ready at the same time start (and are yielded) in call order.
 *
 * @internal
 */
export class CallHeap<T extends { readonly index: number }> {
  private readonly items: Array<T> = []

  get size(): number {
    return this.items.length
  }

  push(item: T): void {
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

  pop(): T | undefined {
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
