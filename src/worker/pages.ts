/**
 * The Worker's pages (the viewer, the run page): static assets built by
 * scripts/build-client.ts, served only behind their token checks.
 */
import { raise } from "./errors.ts";

/**
 * Serves the asset at `assetPath`; its URL carries a token, so the answer stays out of
 * caches and of Referer headers.
 * @example return servePage(c.env, c.req.url, "/viewer.html", "the viewer page");
 */
export async function servePage(
  env: Env,
  requestUrl: string,
  assetPath: string,
  what: string,
): Promise<Response> {
  const page = await env.ASSETS.fetch(new Request(new URL(assetPath, requestUrl)));
  if (!page.ok) {
    raise(
      "not_configured",
      `${what} ${assetPath} is missing from the assets; build it with node scripts/build-client.ts`,
    );
  }
  const headers = new Headers(page.headers);
  headers.set("Cache-Control", "no-store");
  headers.set("Referrer-Policy", "no-referrer");
  return new Response(page.body, { status: 200, headers });
}
