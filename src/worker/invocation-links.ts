/**
 * The links of one invocation that a create answer (and a run's call links) carry:
 * a fresh subscribe token and absolute URLs that already hold it.
 */
import { subscribeSecret } from "./auth.ts";
import { mintSubscribeToken } from "./subscribe-token.ts";

/**
 * What a client needs to follow an invocation: absolute URLs that carry the token.
 * @example const { viewUrl } = await invocationLinks(c.req.raw, c.env, "call_42");
 */
export async function invocationLinks(req: Request, env: Env, id: string) {
  const token = await mintSubscribeToken(subscribeSecret(env), id, Date.now());
  const origin = new URL(req.url).origin;
  const base = `${origin}/v1/invocations/${encodeURIComponent(id)}`;
  const query = `?token=${encodeURIComponent(token)}`;
  return {
    subscribeToken: token,
    socketUrl: `${base.replace(/^http/, "ws")}/socket${query}`,
    eventsUrl: `${base}/events${query}`,
    viewUrl: `${origin}/view/${encodeURIComponent(id)}${query}`,
  };
}
