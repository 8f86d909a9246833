import { SandboxError } from "../errors.ts";

/**
 * A path error as the caller's fault, naming only the path as given: ENAMETOOLONG,
 * ELOOP, ENOTDIR and friends are 400s, ENOENT a 404, EACCES a 403. Anything else is
 * rethrown (a real host error).
 * @example throw pathError(err, "a/b.txt");
 */
export function pathError(err: unknown, rel: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  const what = `'${shown(rel)}'`;
  switch (code) {
    case "ENOENT":
      return new SandboxError(
        "not_found",
        `${what} does not exist in the workspace; list files with glob`,
      );
    case "ENAMETOOLONG":
      return new SandboxError(
        "bad_request",
        `path ${what} is too long: each name may have at most 255 bytes, the whole path 4096`,
      );
    case "ELOOP":
      return new SandboxError("bad_request", `path ${what} has too many levels of symbolic links`);
    case "ENOTDIR":
      return new SandboxError(
        "bad_request",
        `path ${what} goes through something that is not a directory`,
      );
    case "EACCES":
    case "EPERM":
      return new SandboxError("forbidden", `${what} is not readable by the sandbox host`);
    case "ENXIO":
    case "ENODEV":
      return new SandboxError("bad_request", `${what} is not a regular file`);
    default:
      return err;
  }
}

/** The path as echoed back in a message: at most 120 characters. */
export function shown(rel: string): string {
  return rel.length > 120 ? `${rel.slice(0, 117)}...` : rel;
}
