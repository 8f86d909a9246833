/**
 * `expose_port { port, expiresInSeconds? }`: shares a server the model started in its
 * created sandbox as a preview URL (decision 182), as `POST /v1/sandboxes/:id/ports`
 * does: anyone with the URL can open that port until it expires. The URLs are made on
 * `PUBLIC_URL` (or `PREVIEW_DOMAIN`), since the tool runs where no request's address is seen.
 */
import { z } from "zod";
import { placementOf } from "../execenv/index.ts";
import { workerConfig } from "../protocol/index.ts";
import {
  PREVIEW_DEFAULT_SECONDS,
  PREVIEW_MAX_PORT,
  PREVIEW_MAX_SECONDS,
  PREVIEW_MIN_PORT,
  previewUrls,
  type SandboxPortsApi,
} from "../protocol/preview.ts";
import { mintPreviewToken } from "../protocol/preview-token.ts";
import { defineTool } from "./registry.ts";

export const exposePortTool = defineTool({
  name: "expose_port",
  description: `Shares a server you started in this sandbox (for example with bash background: true) as a URL a person can open in a browser: it reaches the port on the sandbox's own loopback, HTTP, server-sent events and WebSockets, until it expires (default ${PREVIEW_DEFAULT_SECONDS / 60} minutes). Ports ${PREVIEW_MIN_PORT}-${PREVIEW_MAX_PORT}. Start the server first; calling it again for the same port gives a new URL and ends the old one. Works in a created sandbox only.`,
  params: z.strictObject({
    port: z.number().int().min(PREVIEW_MIN_PORT).max(PREVIEW_MAX_PORT),
    expiresInSeconds: z.number().int().min(1).max(PREVIEW_MAX_SECONDS).optional(),
  }),
  output: { maxBytes: 2048, maxLines: 8 },
  replaySafe: true,
  async execute({ params, out, context }) {
    const sandbox = context.sandbox;
    if (placementOf(sandbox) === null) {
      throw new Error(
        `expose_port works in a created sandbox (POST /v1/sandboxes), and this call runs in "${sandbox}"`,
      );
    }
    const config = workerConfig(context.env);
    if (config.subscribeSecret === null)
      throw new Error("SUBSCRIBE_SECRET is not set: no URL can be made");
    const records = context.env.SANDBOX_RECORDS.getByName(sandbox) as unknown as SandboxPortsApi;
    const seconds = params.expiresInSeconds ?? PREVIEW_DEFAULT_SECONDS;
    const grant = await records.expose(params.port, seconds);
    if (!grant.ok) throw new Error(grant.error.message);
    const token = await mintPreviewToken(config.subscribeSecret, {
      sandboxId: sandbox,
      ...grant.value,
    });
    const { url, pathUrl } = previewUrls(token, config.publicUrl, config.previewDomain);
    const until = new Date(grant.value.expiresAt * 1000).toISOString();
    out.write(
      `${url}\nPort ${params.port} of this sandbox is shared until ${until}: anyone with the URL can open it (for clients: ${pathUrl}).`,
    );
    Object.assign(out.details as Record<string, unknown>, {
      port: params.port,
      url,
      pathUrl,
      expiresAt: until,
    });
  },
});
