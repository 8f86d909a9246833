import { SandboxError } from "../errors.ts";

/**
 * Compiles a glob the way ripgrep's `--glob` reads it, so both search engines agree:
 * a pattern without `/` matches a file's name at any depth; a pattern with `/` matches
 * the whole workspace-relative path (a leading `/` anchors at the root, as usual).
 * `*` and `?` stay within one path segment, `**` spans segments, `{a,b}` and `[a-z]`
 * (`[!a]` negated) are supported.
 * @example compileGlob("*.ts")("src/a.ts") // true
 */
export function compileGlob(pattern: string): (relPath: string) => boolean {
  if (pattern === "") {
    throw new SandboxError("bad_request", "glob pattern is empty; try e.g. '**/*.ts'");
  }
  const anchored = pattern.includes("/");
  const body = pattern.startsWith("/") ? pattern.slice(1) : pattern;
  const regex = new RegExp(`^${globToRegexSource(body, pattern)}$`, "u");
  return (relPath) => regex.test(anchored ? relPath : relPath.slice(relPath.lastIndexOf("/") + 1));
}

function globToRegexSource(glob: string, original: string): string {
  let out = "";
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "*") {
      if (glob[i + 1] === "*") {
        const atStart = i === 0 || glob[i - 1] === "/";
        const atEnd = i + 2 === glob.length || glob[i + 2] === "/";
        if (atStart && atEnd) {
          // "**/" matches zero or more whole segments; a trailing "**" matches the rest.
          if (i + 2 < glob.length) {
            out += "(?:[^/]*/)*";
            i += 2;
          } else {
            out += ".*";
            i += 1;
          }
          continue;
        }
        i += 1;
      }
      out += "[^/]*";
    } else if (ch === "?") {
      out += "[^/]";
    } else if (ch === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) throw badGlob(original, "a '[' has no matching ']'");
      let cls = glob.slice(i + 1, close);
      if (cls.startsWith("!")) cls = `^${cls.slice(1)}`;
      out += `[${cls.replace(/\\/g, "\\\\")}]`;
      i = close;
    } else if (ch === "{") {
      braces++;
      out += "(?:";
    } else if (ch === "}" && braces > 0) {
      braces--;
      out += ")";
    } else if (ch === "," && braces > 0) {
      out += "|";
    } else if (ch === "\\" && i + 1 < glob.length) {
      i++;
      out += escapeRegex(glob[i]!);
    } else {
      out += escapeRegex(ch);
    }
  }
  if (braces > 0) throw badGlob(original, "a '{' has no matching '}'");
  return out;
}

function escapeRegex(ch: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(ch) ? `\\${ch}` : ch;
}

function badGlob(pattern: string, why: string): SandboxError {
  return new SandboxError("bad_request", `glob '${pattern}' is malformed: ${why}`);
}
