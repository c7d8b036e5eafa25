/**
 * A non-negative integer's digits with `,` every three, written by hand: text must not depend on the machine's
 * locale, and toLocaleString / Intl.NumberFormat load ICU (~20 ms) on first use, on the start-up path.
 */
export function groupDigits(digits: string | number): string {
  return String(digits).replace(/\B(?=(\d{3})+$)/g, ',');
}
