/**
 * Retries of idempotent sandbox requests (reads of the spill, files, searches) when the
 * failure is transient: no answer at all (a reset or refused connection under load), or
 * a 502/503/504 from something in between (decision 163). Waits 100, 200, 400, 800 ms
 * between the five attempts (1.5 s in all), or what `Retry-After` says, up to 2 s.
 * Anything else, and the last failure, is the caller's to report as it was.
 */

/** Statuses worth another attempt: a proxy or a busy host, not the request's fault. */
const TRANSIENT_STATUSES = new Set([502, 503, 504]);
const ATTEMPTS = 5;
const FIRST_WAIT_MS = 100;
const MAX_WAIT_MS = 2000;

/**
 * `fetch`, repeated while it throws (unless aborted) or answers a transient status.
 * The last answer or error is returned or thrown as is.
 * @example const res = await fetchIdempotent(fetch, `${url}/v1/exec/a1/spill`, { headers });
 */
export async function fetchIdempotent(
  fetchImpl: typeof fetch,
  url: string,
  init: RequestInit,
): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetchImpl(url, init);
    } catch (err) {
      if (init.signal?.aborted || attempt >= ATTEMPTS) throw err;
      await pause(waitMs(attempt, null), init.signal);
      continue;
    }
    if (!TRANSIENT_STATUSES.has(res.status) || attempt >= ATTEMPTS) return res;
    const retryAfter = res.headers.get("retry-after");
    await res.body?.cancel();
    await pause(waitMs(attempt, retryAfter), init.signal);
  }
}

function waitMs(attempt: number, retryAfter: string | null): number {
  const asked = retryAfter === null ? Number.NaN : Number(retryAfter) * 1000;
  const backoff = FIRST_WAIT_MS * 2 ** (attempt - 1);
  return Math.min(Number.isFinite(asked) ? asked : backoff, MAX_WAIT_MS);
}

function pause(ms: number, signal: AbortSignal | null | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
