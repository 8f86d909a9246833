/** How a subscription spaces its reconnect attempts. */
export interface BackoffPolicy {
  /** Ceiling of the first delay. */
  initialMs: number;
  /** Ceiling of any delay. */
  maxMs: number;
  /** Consecutive failed attempts after which the subscription gives up. */
  maxAttempts: number;
}

/** See docs/decisions/061-client-reconnect.md. */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 250, maxMs: 8000, maxAttempts: 12 };

/**
 * Delay before reconnect attempt number `attempt` (0-based): exponential, capped,
 * with "equal jitter" (half fixed, half random) so a crowd of viewers dropped at
 * once does not come back at once, and no delay collapses to zero.
 *
 * @example
 * backoffDelay(0, DEFAULT_BACKOFF) // between 125 and 250 ms
 * backoffDelay(10, DEFAULT_BACKOFF) // between 4000 and 8000 ms
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
