/** Where an invocation lives: the API's base URL, its id, and a subscribe token if the caller has one. */
export interface InvocationAddress {
  baseUrl: string;
  id: string;
  token?: string;
}

export type StreamKind = "socket" | "sse";

/**
 * The URL of an invocation's event stream. Accepts an address, or any URL the API
 * hands out for it (`socketUrl`, `eventsUrl`, `viewUrl`): the path is switched to the
 * wanted transport and the token kept.
 *
 * @example
 * streamUrl("https://tw.example/view/abc?token=t", "socket")
 * // "wss://tw.example/v1/invocations/abc/socket?token=t"
 */
export function streamUrl(target: string | InvocationAddress, kind: StreamKind): string {
  const url =
    typeof target === "string"
      ? fromUrl(target)
      : new URL(
          `v1/invocations/${encodeURIComponent(target.id)}/socket`,
          target.baseUrl.endsWith("/") ? target.baseUrl : `${target.baseUrl}/`,
        );
  if (typeof target !== "string" && target.token) url.searchParams.set("token", target.token);
  url.pathname = url.pathname.replace(
    /\/(socket|events)$/,
    kind === "socket" ? "/socket" : "/events",
  );
  if (kind === "socket") url.protocol = url.protocol.replace(/^http/, "ws");
  else url.protocol = url.protocol.replace(/^ws/, "http");
  return url.toString();
}

function fromUrl(text: string): URL {
  const url = new URL(text);
  const view = /^(.*)\/view\/([^/]+)\/?$/.exec(url.pathname);
  if (view) url.pathname = `${view[1]}/v1/invocations/${view[2]}/socket`;
  return url;
}
