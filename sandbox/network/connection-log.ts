/** One connection a sandbox's command asked the proxy for (`GET /v1/sandboxes/:id/network`). */
export interface ConnectionRecord {
  time: string;
  host: string;
  port: number;
  /** The address it connected to (or the first refused); null when nothing resolved. */
  address: string | null;
  allowed: boolean;
  /** The rule that allowed it, or why it was refused. */
  why: string;
  /** Bytes the command sent upstream and received from it, through the proxy. */
  bytesUp: number;
  bytesDown: number;
  /** Null while it is open. */
  durationMs: number | null;
}

/** A sandbox's egress totals, in its view. */
export interface EgressTotals {
  connections: number;
  allowed: number;
  denied: number;
  bytesUp: number;
  bytesDown: number;
}

/** Connections kept per sandbox: the last 1,000. */
const CONNECTION_LOG_SIZE = 1000;

/**
 * The last `CONNECTION_LOG_SIZE` connections of one sandbox, oldest first, and its
 * totals since it was made (the totals count every connection, the log only the last).
 */
export class ConnectionLog {
  readonly totals: EgressTotals = {
    connections: 0,
    allowed: 0,
    denied: 0,
    bytesUp: 0,
    bytesDown: 0,
  };
  readonly #ring: ConnectionRecord[] = [];

  /** Adds a record (its bytes and duration are filled in as it runs) and returns it. */
  add(
    record: Omit<ConnectionRecord, "time" | "bytesUp" | "bytesDown" | "durationMs">,
  ): ConnectionRecord {
    const full = {
      time: new Date().toISOString(),
      ...record,
      bytesUp: 0,
      bytesDown: 0,
      durationMs: null,
    };
    this.#ring.push(full);
    if (this.#ring.length > CONNECTION_LOG_SIZE) this.#ring.shift();
    this.totals.connections++;
    if (record.allowed) this.totals.allowed++;
    else this.totals.denied++;
    return full;
  }

  /** Counts bytes of `record` in both its own and the sandbox's totals. */
  count(record: ConnectionRecord, up: number, down: number): void {
    record.bytesUp += up;
    record.bytesDown += down;
    this.totals.bytesUp += up;
    this.totals.bytesDown += down;
  }

  /** The sandbox's bytes so far, both ways. */
  get bytes(): number {
    return this.totals.bytesUp + this.totals.bytesDown;
  }

  entries(): ConnectionRecord[] {
    return [...this.#ring];
  }
}
