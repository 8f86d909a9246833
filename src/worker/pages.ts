/**
 * The Worker's pages (the viewer, the run page): static assets built by
 * scripts/build-client.ts, served only behind their token checks.
 */
import { raise } from "./errors.ts";

/**
 * Serves the asset at `assetPath`; its URL carries a token, so the answer stays out of
 * caches and of Referer headers, and no other origin may frame it.
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
  // No origin may frame a page (clickjacking); a meta CSP cannot say this, a header can.
  headers.set("Content-Security-Policy", "frame-ancestors 'none'");
  headers.set("X-Frame-Options", "DENY");
  return new Response(page.body, { status: 200, headers });
}
