// The pi extension's expose_port schema holds the bounds Toolwire checks (src/protocol's
// preview caps): pi's own validator takes a port or an expiry at its bound and refuses
// one just past it, so a model's mistake is refused before a call is made.
import { validateToolArguments } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { EXPOSE_PORT_TOOL } from "../../../src/pi/preview-tool.ts";
import {
  PREVIEW_MAX_PORT,
  PREVIEW_MAX_SECONDS,
  PREVIEW_MIN_PORT,
} from "../../../src/protocol/preview.ts";

function piAccepts(args: Record<string, unknown>): boolean {
  try {
    validateToolArguments(
      { name: "expose_port", description: "", parameters: EXPOSE_PORT_TOOL.parameters } as never,
      { type: "toolCall", id: "t", name: "expose_port", arguments: args } as never,
    );
    return true;
  } catch {
    return false;
  }
}

describe("the pi extension's expose_port schema", () => {
  it.each([
    ["the lowest port", { port: PREVIEW_MIN_PORT }, true],
    ["the highest port", { port: PREVIEW_MAX_PORT }, true],
    ["the bridge's egress port 900", { port: 900 }, false],
    ["one below the lowest", { port: PREVIEW_MIN_PORT - 1 }, false],
    ["one above the highest", { port: PREVIEW_MAX_PORT + 1 }, false],
    ["a port not whole", { port: 8000.5 }, false],
    ["no port", {}, false],
    ["the longest expiry", { port: 8000, expiresInSeconds: PREVIEW_MAX_SECONDS }, true],
    ["past the longest expiry", { port: 8000, expiresInSeconds: PREVIEW_MAX_SECONDS + 1 }, false],
    ["an expiry of 0", { port: 8000, expiresInSeconds: 0 }, false],
    ["an unknown argument", { port: 8000, host: "0.0.0.0" }, false],
  ] as const)("%s", (_label, args, accepted) => {
    expect(piAccepts(args)).toBe(accepted);
  });
});
