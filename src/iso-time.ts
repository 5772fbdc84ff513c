// Epoch milliseconds as ISO 8601 text, for report items and envelopes.

/**
 * null for a time outside the JavaScript Date range: validation keeps such times out (README "Limits"), but
 * a data directory written before it may hold one, and one bad row must not fail a whole report.
 */
export function isoTime(time: number): string | null {
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}
