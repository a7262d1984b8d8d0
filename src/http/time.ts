import type { Context } from "hono";

/** `YYYY-MM-DDTHH:MM:SSZ` for unix seconds. */
export function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19) + "Z";
}

/** Unix seconds for an ISO 8601 string, or null when it does not parse. */
export function parseIso(value: string): number | null {
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

/**
 * The request's clock in unix seconds. Tests move it with the `X-Test-Now` header, honoured
 * only when ALLOW_TEST_CLOCK is "1" (the test runner's binding), so time windows are
 * tested without sleeping.
 */
export function now(c: Context): number {
  const fake = c.env?.ALLOW_TEST_CLOCK === "1" ? c.req.header("x-test-now") : undefined;
  if (fake && /^\d+$/.test(fake)) return Number(fake);
  return Math.floor(Date.now() / 1000);
}
