import { applyDiscount, formatPrice } from "./price.js"

export class Cart {
  constructor() {
    this.items = []
  }

  add(name, cents, quantity = 1) {
    this.items.push({ name, cents, quantity })
  }

  total(discountPercent = 0) {
    // TODO: an empty cart should total 0, not NaN
    const subtotal = this.items.map((item) => item.cents * item.quantity).reduce((a, b) => a + b)
    return applyDiscount(subtotal, discountPercent)
  }

  receipt(discountPercent = 0) {
    return `${this.items.length} items, total ${formatPrice(this.total(discountPercent))}`
  }
}
