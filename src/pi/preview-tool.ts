/**
 * `expose_port` as the pi extension registers it (issue 25, decision 182): the model
 * shares a server it started in the session's sandbox as a preview URL. The call runs in
 * Toolwire like the others; the bounds come from src/protocol, where the server reads
 * them, and test/node/pi/preview-tool.test.ts holds pi's validation to them.
 */
import {
  PREVIEW_DEFAULT_SECONDS,
  PREVIEW_MAX_PORT,
  PREVIEW_MAX_SECONDS,
  PREVIEW_MIN_PORT,
} from "../protocol/preview.ts";
import type { JsonSchemaObject } from "./steering-tools.ts";

/** One tool the extension registers besides pi's own and the job tools. */
export interface PreviewTool {
  name: "expose_port";
  label: string;
  description: string;
  parameters: JsonSchemaObject;
}

export const EXPOSE_PORT_TOOL: PreviewTool = {
  name: "expose_port",
  label: "expose_port",
  description: `Shares a server you started in the Toolwire sandbox (for example with bash background: true) as a URL a person can open in a browser: it reaches that port on the sandbox's own loopback (HTTP, server-sent events, WebSockets) until it expires. Answers the URL on its first line. Calling it again for the same port gives a new URL and ends the old one. Works in a sandbox of this session's own or a created one, not in "default".`,
  parameters: {
    type: "object",
    properties: {
      port: {
        type: "integer",
        minimum: PREVIEW_MIN_PORT,
        maximum: PREVIEW_MAX_PORT,
        description: `The port the server listens on in the sandbox (${PREVIEW_MIN_PORT}-${PREVIEW_MAX_PORT})`,
      },
      expiresInSeconds: {
        type: "integer",
        minimum: 1,
        maximum: PREVIEW_MAX_SECONDS,
        description: `How long the URL works, in seconds (default ${PREVIEW_DEFAULT_SECONDS}, at most ${PREVIEW_MAX_SECONDS})`,
      },
    },
    required: ["port"],
    additionalProperties: false,
  },
};
