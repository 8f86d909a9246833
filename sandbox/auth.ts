import type { MiddlewareHandler } from "hono";
import { bearerToken, secretMatches } from "../src/protocol/index.ts";
import { SandboxError } from "./errors.ts";

/**
 * Hono middleware: every request must carry `Authorization: Bearer <token>`, compared
 * in constant time (src/protocol/bearer.ts).
 * @example app.use("/v1/*", bearerAuth(config.token));
 */
export function bearerAuth(token: string): MiddlewareHandler {
  return async (c, next) => {
    const presented = bearerToken(c.req.header("authorization") ?? "");
    if (presented === null) {
      throw new SandboxError(
        "unauthorized",
        "missing bearer token: send 'Authorization: Bearer <SANDBOX_TOKEN>'",
      );
    }
    if (!(await secretMatches(presented, token))) {
      // 401 like the Worker: a wrong credential is no credential (403 is for a valid one
      // that may not do this).
      throw new SandboxError("unauthorized", "bearer token does not match this sandbox's token");
    }
    await next();
  };
}
