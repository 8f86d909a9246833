/**
 * Preview URLs on the wire (issue 25, decision 182): what `POST /v1/sandboxes/:id/ports`
 * takes and answers, the ports one may name, how long a URL may live, and the header
 * that carries a visitor's own `Authorization` from the Worker to the sandbox host (whose
 * `Authorization` is the Worker's bearer token). Shared by the Worker, the Sandbox DO,
 * the sandbox host, the CLI and the `expose_port` tool.
 */
import type { Outcome } from "./outcome.ts";

/**
 * Lowest port a preview URL may name. Below it nothing of a sandbox listens (its commands
 * have no capabilities), and its bridge's egress socket is there (port 900): a URL must
 * never lead a visitor into the sandbox's own way out.
 */
export const PREVIEW_MIN_PORT = 1024;
export const PREVIEW_MAX_PORT = 65_535;

/** How long a preview URL lives unless the request says: one hour. */
export const PREVIEW_DEFAULT_SECONDS = 3600;
/** Longest a preview URL may live: 7 days, as long as a sandbox may idle. */
export const PREVIEW_MAX_SECONDS = 7 * 86_400;
/** Ports one sandbox may have exposed at once. */
export const PREVIEW_MAX_PORTS = 16;

/** Where the Worker puts a visitor's `Authorization` on its way to the sandbox host. */
export const PREVIEW_AUTHORIZATION_HEADER = "x-toolwire-app-authorization";
/** Set on the sandbox host's own refusals (no listener, no sandbox), never on an app's answer. */
export const PREVIEW_REFUSAL_HEADER = "x-toolwire-refusal";

/** One exposed port, as `POST` and `GET /v1/sandboxes/:id/ports` answer it. */
export interface PortExposure {
  port: number;
  /** The host form, `http://<token>.localhost:8787/` locally: apps with absolute paths work. */
  url: string;
  /** The path form, `http://127.0.0.1:8787/p/<token>/`. */
  pathUrl: string;
  expiresAt: string;
}

/** What the Sandbox DO keeps of one exposed port: the token is made from it, never stored. */
export interface PortGrant {
  port: number;
  /** Random, new at each expose: a revoked or replaced URL's token names an old one. */
  nonce: number;
  /** Unix seconds. */
  expiresAt: number;
}

/** The Sandbox DO's preview methods (beside `SandboxApi`). */
export interface SandboxPortsApi {
  /** Exposes `port` for `seconds` (counts as use); exposing it again replaces its URL. */
  expose(port: number, seconds: number): Promise<Outcome<PortGrant>>;
  ports(): Promise<Outcome<PortGrant[]>>;
  /** Revokes `port`'s URL; a 404 when none is exposed. */
  unexpose(port: number): Promise<Outcome<PortGrant>>;
  /**
   * Whether a token's grant still opens the sandbox: the same nonce, not past its expiry,
   * the sandbox active. A 410 says which of these failed; `host` is what `hostFetch` takes.
   */
  admit(port: number, nonce: number): Promise<Outcome<{ host: string }>>;
}

/**
 * The two URLs of a token: the host form on `<token>.<domain>` over https when a preview
 * domain is set, else `<token>.localhost` on `origin`'s port; the path form on `origin`.
 * @example previewUrls("k3…", "http://127.0.0.1:8787", undefined) // { url: "http://k3….localhost:8787/", … }
 */
export function previewUrls(
  token: string,
  origin: string,
  domain: string | undefined,
): { url: string; pathUrl: string } {
  const at = new URL(origin);
  const url = domain
    ? `https://${token}.${domain}/`
    : `${at.protocol}//${token}.localhost${at.port ? `:${at.port}` : ""}/`;
  return { url, pathUrl: `${at.origin}/p/${token}/` };
}

/**
 * The problem with a requested port, or null.
 * @example portProblem(80) // "port 80 is below 1024: …"
 */
export function portProblem(port: unknown): string | null {
  if (typeof port !== "number" || !Number.isInteger(port)) return "port must be an integer";
  if (port < PREVIEW_MIN_PORT || port > PREVIEW_MAX_PORT) {
    return `port ${port} is outside ${PREVIEW_MIN_PORT}-${PREVIEW_MAX_PORT}: a sandbox's commands cannot listen below ${PREVIEW_MIN_PORT}; start the server on a port such as 8000`;
  }
  return null;
}
