import assert from "node:assert/strict"
import { Cart } from "../src/cart.js"

const cart = new Cart()
assert.equal(cart.total(), 0, "an empty cart totals 0")
cart.add("pen", 199, 3)
assert.equal(cart.total(15), 507, "discounts round to whole cents")
console.log("all checks passed")
