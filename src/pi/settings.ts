/** Where the pi extension sends its calls and which sandbox they run in, read once from the environment. */
import { durationSeconds } from "../client/duration.ts";
import type { CreateSandboxRequest } from "../client/sandboxes.ts";
import { sandboxOfToken } from "../protocol/sandbox-token.ts";

export interface PiToolwireSettings {
  /** Toolwire's base URL (`TOOLWIRE_URL`), e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** The operator's API token or a sandbox token (`TOOLWIRE_TOKEN`). */
  token: string;
  /**
   * The sandbox every call runs in: `TOOLWIRE_SANDBOX` (an id, or `default` for the
   * host's shared workspace), else the one a sandbox token opens (decision 250); null,
   * the default: a sandbox of the pi session's own (decision 223).
   */
  sandbox: string | null;
  /** How the session's own sandbox is made (`TOOLWIRE_SANDBOX_*`, docs/pi.md). */
  newSandbox: CreateSandboxRequest;
  /** What is wrong with a `TOOLWIRE_SANDBOX_*` setting, as a sentence, or null. */
  problem: string | null;
}

/**
 * Reads `TOOLWIRE_URL`, `TOOLWIRE_TOKEN`, `TOOLWIRE_SANDBOX` and the settings of the
 * session's own sandbox: `TOOLWIRE_SANDBOX_BACKEND` (`host` or `container`),
 * `TOOLWIRE_SANDBOX_IDLE` (`900`, `15m`, `2h`), `TOOLWIRE_SANDBOX_ALLOW` (network
 * entries, comma-separated) and `TOOLWIRE_SANDBOX_LIMITS` (JSON, e.g.
 * `{"diskBytes":268435456}`). A sandbox token alone is enough: its sandbox is where the
 * calls run. Nothing is thrown here: each tool call reports a missing or bad setting as
 * its error, so pi still starts.
 * @example settingsFromEnv(process.env) // { url: "http://127.0.0.1:8787", token: "…", sandbox: null, … }
 */
export function settingsFromEnv(env: Record<string, string | undefined>): PiToolwireSettings {
  const newSandbox: CreateSandboxRequest = {};
  const problems: string[] = [];
  const backend = env.TOOLWIRE_SANDBOX_BACKEND;
  if (backend === "host" || backend === "container") newSandbox.backend = backend;
  else if (backend)
    problems.push(`TOOLWIRE_SANDBOX_BACKEND must be host or container, got "${backend}"`);
  if (env.TOOLWIRE_SANDBOX_IDLE) {
    const seconds = durationSeconds(env.TOOLWIRE_SANDBOX_IDLE);
    if (seconds === null) {
      problems.push(
        `TOOLWIRE_SANDBOX_IDLE must be a duration such as 900, 15m or 2h, got "${env.TOOLWIRE_SANDBOX_IDLE}"`,
      );
    } else newSandbox.idleTimeoutSeconds = seconds;
  }
  if (env.TOOLWIRE_SANDBOX_ALLOW !== undefined) {
    const allow = env.TOOLWIRE_SANDBOX_ALLOW.split(",").map((entry) => entry.trim());
    newSandbox.network = { allow: allow.filter((entry) => entry !== "") };
  }
  if (env.TOOLWIRE_SANDBOX_LIMITS) {
    try {
      newSandbox.limits = JSON.parse(env.TOOLWIRE_SANDBOX_LIMITS);
    } catch {
      problems.push(
        `TOOLWIRE_SANDBOX_LIMITS must be JSON such as {"diskBytes":268435456}, got ${env.TOOLWIRE_SANDBOX_LIMITS}`,
      );
    }
  }
  return {
    url: (env.TOOLWIRE_URL ?? "").replace(/\/+$/, ""),
    token: env.TOOLWIRE_TOKEN ?? "",
    sandbox: env.TOOLWIRE_SANDBOX || sandboxOfToken(env.TOOLWIRE_TOKEN ?? "") || null,
    newSandbox,
    problem: problems.length > 0 ? problems.join("; ") : null,
  };
}

/** What is missing for a call to be made, as a sentence, or null. */
export function missingSetting(settings: PiToolwireSettings): string | null {
  if (settings.url === "") {
    return "TOOLWIRE_URL is not set; start pi with TOOLWIRE_URL=http://127.0.0.1:8787 (npm start prints it) and TOOLWIRE_TOKEN";
  }
  if (settings.token === "") {
    return "TOOLWIRE_TOKEN is not set; use the API_TOKEN from Toolwire's .dev.vars, or a sandbox's token";
  }
  return settings.problem;
}
