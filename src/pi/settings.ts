/** Where the pi extension sends its calls, read once from the environment. */
import { sandboxOfToken } from "../protocol/sandbox-token.ts";

export interface PiToolwireSettings {
  /** Toolwire's base URL (`TOOLWIRE_URL`), e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** The operator's API token or a sandbox token (`TOOLWIRE_TOKEN`). */
  token: string;
  /**
   * The sandbox every call runs in: `TOOLWIRE_SANDBOX`, else the one a sandbox token
   * opens, else `default`.
   */
  sandbox: string;
}

/**
 * Reads `TOOLWIRE_URL`, `TOOLWIRE_TOKEN` and `TOOLWIRE_SANDBOX`. A missing URL or token
 * is not thrown here: each tool call reports it as its error, so pi still starts. A
 * sandbox token alone is enough: its sandbox is where the calls run (decision 250).
 * @example settingsFromEnv(process.env) // { url: "http://127.0.0.1:8787", token: "…", sandbox: "default" }
 */
export function settingsFromEnv(env: Record<string, string | undefined>): PiToolwireSettings {
  return {
    url: (env.TOOLWIRE_URL ?? "").replace(/\/+$/, ""),
    token: env.TOOLWIRE_TOKEN ?? "",
    sandbox: env.TOOLWIRE_SANDBOX || sandboxOfToken(env.TOOLWIRE_TOKEN ?? "") || "default",
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
  return null;
}
