// Shared helpers for the HTTP API tests: requests through the real Worker entry.
import { exports } from "cloudflare:workers";
import { expect } from "vitest";

export const API_TOKEN = "test-api-token";
export const SUBSCRIBE_SECRET = "test-subscribe-secret";
export const ORIGIN = "http://toolwire.test";

export function authed(init: RequestInit = {}): RequestInit {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${API_TOKEN}`);
  return { ...init, headers };
}

/** A request to the Worker, with the bearer token unless `auth` is false. */
export function call(path: string, init: RequestInit = {}, auth = true): Promise<Response> {
  return exports.default.fetch(`${ORIGIN}${path}`, auth ? authed(init) : init);
}

export function postJson(path: string, body: unknown, auth = true): Promise<Response> {
  return call(
    path,
    { method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" } },
    auth,
  );
}

export interface Created {
  id: string;
  toolCallId: string;
  status: string;
  subscribeToken: string;
  socketUrl: string;
  eventsUrl: string;
  viewUrl: string;
}

export async function create(body: Record<string, unknown>): Promise<Created> {
  const res = await postJson("/v1/invocations", body);
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

/** Asserts the API's error shape and returns the message. */
export async function expectError(res: Response, status: number, code: string): Promise<string> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(10);
  return body.error.message;
}

let counter = 0;
/** A fresh toolCallId per use, so tests never share an invocation. */
export function freshId(label: string): string {
  counter++;
  return `${label}-${counter}-${crypto.randomUUID().slice(0, 8)}`;
}

/**
 * GETs the invocation until `ready` holds for it (output reaches GET when the DO's
 * publisher publishes it, paced at most 100 ms apart), then returns it.
 */
export async function viewWhen<V>(id: string, ready: (view: V) => boolean): Promise<V> {
  for (let attempt = 0; ; attempt++) {
    const res = await call(`/v1/invocations/${id}`);
    expect(res.status).toBe(200);
    const view = (await res.json()) as V;
    if (ready(view) || attempt === 100) return view;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
