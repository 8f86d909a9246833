import { timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { SandboxError } from "./errors.ts";

/**
 * Compares a presented bearer token with the configured one in constant time (the
 * comparison does not leak how many leading characters matched).
 * @example tokenMatches("s3cret", "s3cret") // true
 */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = Buffer.from(presented, "utf8");
  const b = Buffer.from(expected, "utf8");
  // Compare against itself on a length mismatch so the work done does not depend on it.
  if (a.length !== b.length) {
    timingSafeEqual(b, b);
    return false;
  }
  return timingSafeEqual(a, b);
}

/**
 * Hono middleware: every request must carry `Authorization: Bearer <token>`.
 * @example app.use("/v1/*", bearerAuth(config.token));
 */
export function bearerAuth(token: string): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new SandboxError(
        401,
        "unauthorized",
        "missing bearer token: send 'Authorization: Bearer <SANDBOX_TOKEN>'",
      );
    }
    if (!tokenMatches(match[1]!, token)) {
      throw new SandboxError(403, "forbidden", "bearer token does not match this sandbox's token");
    }
    await next();
  };
}
