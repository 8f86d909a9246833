import path from "node:path";

/** An archive entry that would leave the workspace, or one of a kind uploads refuse. */
export class TarRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TarRefusal";
  }
}

const BLOCK = 512;
/** Longest pax or GNU long-name record read into memory. */
const MAX_META_BYTES = 64 * 1024;

/** Entry types an upload accepts: files, hard and symbolic links, directories, and name records. */
const ACCEPTED = new Set(["0", "\0", "7", "1", "2", "5", "x", "g", "L", "K"]);

/**
 * Checks a tar stream (ustar, pax, GNU long names) as it passes, entry by entry,
 * without holding more than one header or name record: every name and hard-link target
 * must stay inside `target` (relative to the workspace root) once joined to it, and so
 * must every symlink's target, read from the link's own directory. `push` throws a
 * `TarRefusal` at the first entry that does not; `end` throws if the archive was cut.
 * @example const check = new TarCheck("src"); for (const chunk of chunks) check.push(chunk); check.end();
 */
export class TarCheck {
  readonly #target: string;
  #pending: Buffer = Buffer.alloc(0);
  /** Bytes of entry data still to pass before the next header. */
  #skip = 0;
  /** A pax/GNU record being collected: its kind and its bytes so far. */
  #meta: { kind: string; size: number; chunks: Buffer[]; got: number } | null = null;
  #pathOverride: string | null = null;
  #linkOverride: string | null = null;
  #ended = false;
  /** Symlinks the archive made so far: a later entry must not go through one. */
  readonly #symlinks = new Set<string>();
  entries = 0;

  constructor(target: string) {
    this.#target = target;
  }

  push(chunk: Uint8Array): void {
    let buf: Buffer = Buffer.concat([this.#pending, chunk]);
    while (buf.length > 0 && !this.#ended) {
      if (this.#skip > 0) {
        const take = Math.min(this.#skip, buf.length);
        if (this.#meta) this.#collect(buf.subarray(0, take));
        this.#skip -= take;
        buf = buf.subarray(take);
        if (this.#skip === 0 && this.#meta) this.#finishMeta();
        continue;
      }
      if (buf.length < BLOCK) break;
      this.#header(buf.subarray(0, BLOCK));
      buf = buf.subarray(BLOCK);
    }
    this.#pending = this.#ended ? Buffer.alloc(0) : Buffer.from(buf);
  }

  /** Throws when the archive stopped inside an entry (a cut upload). */
  end(): void {
    if (this.#skip > 0 || this.#pending.length > 0 || this.#meta) {
      throw new TarRefusal("the archive ends inside an entry (cut short?)");
    }
  }

  #header(block: Buffer): void {
    if (block.every((b) => b === 0)) {
      // One zero block ends the archive for tar; what follows is padding.
      this.#ended = true;
      return;
    }
    if (!checksumMatches(block)) throw new TarRefusal("not a tar archive (header checksum)");
    const kind = String.fromCharCode(block[156] ?? 0);
    const size = octal(block.subarray(124, 136));
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    if (!ACCEPTED.has(kind)) {
      throw new TarRefusal(
        `entry '${this.#nameOf(block)}' is of tar type '${kind}' (devices, fifos, sparse and volume entries are refused)`,
      );
    }
    if (kind === "x" || kind === "g" || kind === "L" || kind === "K") {
      if (size > MAX_META_BYTES) throw new TarRefusal(`a name record of ${size} bytes is too long`);
      this.#meta = { kind, size, chunks: [], got: 0 };
      this.#skip = padded;
      if (padded === 0) this.#finishMeta();
      return;
    }
    const name = this.#pathOverride ?? this.#nameOf(block);
    const link = this.#linkOverride ?? text(block.subarray(157, 257));
    this.#pathOverride = null;
    this.#linkOverride = null;
    this.#checkEntry(name, kind, link);
    this.entries++;
    this.#skip = kind === "0" || kind === "\0" || kind === "7" ? padded : 0;
  }

  #checkEntry(name: string, kind: string, link: string): void {
    const inside = this.#inside(name);
    if (inside === null) throw new TarRefusal(`entry '${name}' leaves the workspace`);
    const parts = inside.split("/");
    for (let i = 1; i < parts.length; i++) {
      if (this.#symlinks.has(parts.slice(0, i).join("/"))) {
        throw new TarRefusal(`entry '${name}' goes through a symlink the archive made`);
      }
    }
    if (kind === "1" && this.#inside(link) === null) {
      throw new TarRefusal(`hard link '${name}' points outside the workspace ('${link}')`);
    }
    if (kind === "2") {
      const from = path.posix.dirname(inside);
      if (path.posix.isAbsolute(link) || escapes(path.posix.join(from, link))) {
        throw new TarRefusal(`symlink '${name}' points outside the workspace ('${link}')`);
      }
      this.#symlinks.add(path.posix.normalize(inside));
    }
  }

  /** The entry's path relative to the workspace root, or null when it leaves it. */
  #inside(name: string): string | null {
    if (name === "" || name.includes("\0") || path.posix.isAbsolute(name)) return null;
    if (name.split("/").includes("..")) return null;
    const joined = path.posix.join(this.#target || ".", name).replace(/\/+$/, "");
    return escapes(joined) ? null : joined;
  }

  #nameOf(block: Buffer): string {
    const name = text(block.subarray(0, 100));
    const ustar = block.subarray(257, 262).toString("latin1") === "ustar";
    const prefix = ustar ? text(block.subarray(345, 500)) : "";
    return prefix ? `${prefix}/${name}` : name;
  }

  #collect(bytes: Buffer): void {
    const meta = this.#meta!;
    const room = meta.size - meta.got;
    if (room > 0) {
      const keep = bytes.subarray(0, room);
      meta.chunks.push(Buffer.from(keep));
      meta.got += keep.length;
    }
  }

  #finishMeta(): void {
    const meta = this.#meta!;
    this.#meta = null;
    const body = Buffer.concat(meta.chunks);
    if (meta.kind === "L") this.#pathOverride = text(body);
    else if (meta.kind === "K") this.#linkOverride = text(body);
    else {
      const records = paxRecords(body);
      // GNU tar's PAX sparse files rename the entry (GNU.sparse.name) and carry a map tar
      // applies while it writes: refused before anything is written, like type 'S'.
      if (Object.keys(records).some((key) => key.startsWith("GNU.sparse."))) {
        throw new TarRefusal("a sparse file (GNU.sparse pax records) is refused");
      }
      if (meta.kind === "g" && (records.path !== undefined || records.linkpath !== undefined)) {
        throw new TarRefusal("a global pax header that sets path or linkpath is refused");
      }
      if (records.path !== undefined) this.#pathOverride = records.path;
      if (records.linkpath !== undefined) this.#linkOverride = records.linkpath;
    }
  }
}

function escapes(p: string): boolean {
  const normal = path.posix.normalize(p);
  return normal === ".." || normal.startsWith("../") || path.posix.isAbsolute(normal);
}

function text(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString("utf8");
}

/** A size field: octal digits, or GNU's base-256 form (high bit set). */
function octal(field: Buffer): number {
  if ((field[0] ?? 0) & 0x80) {
    let n = 0;
    for (let i = 1; i < field.length; i++) n = n * 256 + (field[i] ?? 0);
    return n;
  }
  const digits = text(field).trim();
  const n = digits === "" ? 0 : Number.parseInt(digits, 8);
  if (!Number.isSafeInteger(n) || n < 0) throw new TarRefusal("not a tar archive (size field)");
  return n;
}

function checksumMatches(block: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (block[i] ?? 0);
  const stored = Number.parseInt(text(block.subarray(148, 156)).trim(), 8);
  return stored === sum;
}

/** `"<len> key=value\n"` records of a pax header. */
function paxRecords(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    if (space === -1) break;
    const len = Number(body.subarray(at, space).toString("latin1"));
    if (!Number.isSafeInteger(len) || len <= 0 || at + len > body.length) {
      throw new TarRefusal("a pax header record is malformed");
    }
    const record = body.subarray(space + 1, at + len - 1).toString("utf8");
    const eq = record.indexOf("=");
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    at += len;
  }
  return out;
}
