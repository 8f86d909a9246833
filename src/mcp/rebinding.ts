/**
 * DNS-rebinding protection (the Streamable HTTP transport's MUST): the `Host` header
 * must name this Worker — a loopback name, or one listed in `MCP_ALLOWED_HOSTS` — and a
 * browser's `Origin`, when sent, must be one of the same hosts. A page on evil.example
 * whose name was rebound to 127.0.0.1 arrives with `Host: evil.example` and is refused
 * with 403 before anything is parsed.
 */
import {
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from "@modelcontextprotocol/server";

/**
 * The hostnames `/mcp` answers for: loopback names plus `extra` (lower-cased, no ports).
 * @example allowedHostnames("toolwire.example.workers.dev") // ["localhost", "127.0.0.1", "[::1]", "toolwire.example.workers.dev"]
 */
export function allowedHostnames(extra: string | undefined): string[] {
  const listed = (extra ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== "");
  return [...new Set([...localhostAllowedHostnames(), ...listed])];
}

/**
 * A 403 response when `req` fails the Host or Origin check, otherwise undefined.
 * @example const refused = rebindingRefusal(req, allowedHostnames(env.MCP_ALLOWED_HOSTS))
 */
export function rebindingRefusal(req: Request, hosts: string[]): Response | undefined {
  const origins = [...new Set([...localhostAllowedOrigins(), ...hosts])];
  return hostHeaderValidationResponse(req, hosts) ?? originValidationResponse(req, origins);
}
