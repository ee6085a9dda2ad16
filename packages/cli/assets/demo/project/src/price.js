// Prices are integers in cents.

export function applyDiscount(cents, percent) {
  // TODO: round to whole cents; fractional cents leak into totals
  return cents - (cents * percent) / 100
}

export function formatPrice(cents) {
  return `$${(cents / 100).toFixed(2)}`
}
