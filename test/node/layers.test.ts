/**
 * The layers point one way (docs/decisions/090). Reads every import of every .ts file
 * under src/, durable-objects/ and sandbox/, and of worker-env.d.ts, takes each file's
 * layer from its path alone and checks every import against the table below, so a
 * forbidden import fails `npm test` with the file, the import and the rule it breaks.
 * A circle of imports between files fails it too, named file by file.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

type Layer =
  | "core"
  | "protocol"
  | "execenv"
  | "tools"
  | "worker"
  | "durable-object"
  | "sandbox-host"
  | "client"
  | "mcp"
  | "pi"
  | "testing"
  | "worker-entry";

/** Which layer a repo-relative path belongs to; undefined for a folder the table lacks. */
function layerOf(file: string): Layer | undefined {
  if (file === "worker-entry.ts") return "worker-entry";
  // The bindings' types are read by every Worker file, so they are the Worker's.
  if (file === "worker-env.d.ts") return "worker";
  const [top, second] = file.split("/");
  if (top === "durable-objects") return "durable-object";
  if (top === "sandbox") return "sandbox-host";
  if (top !== "src") return undefined;
  switch (second) {
    case "core":
      return "core";
    case "protocol":
      return "protocol";
    case "execenv":
      return "execenv";
    case "tools":
      return "tools";
    case "worker":
      return "worker";
    case "client":
      return "client";
    case "mcp":
      return "mcp";
    case "pi":
      return "pi";
    case "testing":
      return "testing";
    default:
      return undefined;
  }
}

/**
 * What each layer may import. The pure core imports only itself; the protocol only the
 * core; the adapters (Worker, Durable Object, sandbox host, client) core and protocol but
 * never each other. The DO runs tools, and the Worker lists and validates them; tools
 * and the sandbox client never reach back into an adapter. Only the Worker's entry joins
 * the Worker and the DO class it exports.
 */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  core: ["core"],
  protocol: ["core", "protocol"],
  execenv: ["core", "protocol", "execenv"],
  tools: ["core", "protocol", "execenv", "tools"],
  worker: ["core", "protocol", "execenv", "tools", "mcp", "worker"],
  "durable-object": ["core", "protocol", "execenv", "tools", "durable-object"],
  "sandbox-host": ["core", "protocol", "sandbox-host"],
  client: ["core", "protocol", "client"],
  // The MCP adapter lists the tools and speaks to the DO through a port the Worker gives it.
  mcp: ["core", "protocol", "tools", "mcp"],
  // The pi extension is a client of the API: it runs pi's tools through toolwire/client.
  pi: ["core", "protocol", "client", "pi"],
  // toolwire/testing starts the built sandbox host and names the built Worker by path:
  // it imports neither.
  testing: ["testing"],
  "worker-entry": ["worker", "durable-object"],
};

/** Layers that run in both runtimes (and the browser): no `node:` or `cloudflare:` imports. */
const RUNTIME_FREE: ReadonlySet<Layer> = new Set(["core", "protocol", "execenv", "tools"]);

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** Every module specifier of `import … from`, `export … from`, `import "…"` and `import("…")`. */
function importsOf(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/gms,
    /^\s*import\s*["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of source.matchAll(pattern)) found.push(match[1]!);
  }
  return found;
}

interface Edge {
  file: string;
  specifier: string;
  /** Repo-relative target of a relative import; undefined for a package. */
  target?: string;
}

function edges(): Edge[] {
  const files = [
    ...["src", "durable-objects", "sandbox"].flatMap(tsFiles),
    "worker-env.d.ts",
    "worker-entry.ts",
  ];
  return files.flatMap((file) =>
    importsOf(readFileSync(path.join(ROOT, file), "utf8")).map((specifier) =>
      specifier.startsWith(".")
        ? {
            file,
            specifier,
            target: path.relative(ROOT, path.resolve(ROOT, path.dirname(file), specifier)),
          }
        : { file, specifier },
    ),
  );
}

/**
 * Every circle of imports between files, each once, as `a.ts -> b.ts -> a.ts` starting at
 * its first file in sort order. Type-only imports count: a circle of types still ties
 * two files into one unit that cannot be read, or moved, apart.
 */
function circles(all: Edge[]): string[] {
  const next = new Map<string, string[]>();
  for (const { file, target } of all) {
    if (target === undefined || target === file) continue;
    next.set(file, [...(next.get(file) ?? []), target]);
  }
  const found = new Set<string>();
  const onPath: string[] = [];
  const done = new Set<string>();
  const visit = (file: string): void => {
    const at = onPath.indexOf(file);
    if (at >= 0) {
      const loop = onPath.slice(at);
      const first = loop.indexOf([...loop].sort()[0]!);
      const turned = [...loop.slice(first), ...loop.slice(0, first)];
      found.add([...turned, turned[0]].join(" -> "));
      return;
    }
    if (done.has(file)) return;
    onPath.push(file);
    for (const to of next.get(file) ?? []) visit(to);
    onPath.pop();
    done.add(file);
  };
  for (const file of [...next.keys()].sort()) visit(file);
  return [...found].sort();
}

/** Every broken rule, one line each. */
function violations(all: Edge[]): string[] {
  const problems: string[] = [];
  for (const { file, specifier, target } of all) {
    const from = layerOf(file);
    if (from === undefined) {
      problems.push(`${file}: its folder has no layer; add it to layerOf and ALLOWED`);
      continue;
    }
    if (target === undefined) {
      if (RUNTIME_FREE.has(from) && /^(node|cloudflare):/.test(specifier)) {
        problems.push(`${file} imports "${specifier}": ${from} runs in every runtime`);
      }
      continue;
    }
    const to = layerOf(target);
    if (to === undefined) {
      problems.push(`${file} imports "${specifier}" (${target}), outside every layer`);
    } else if (!ALLOWED[from].includes(to)) {
      problems.push(
        `${file} imports "${specifier}": ${from} may import ${ALLOWED[from].join(", ")}, not ${to}`,
      );
    }
  }
  return [...new Set(problems)];
}

describe("layers", () => {
  const all = edges();

  it("reads the imports of every production file", () => {
    // A parser that found nothing would pass every rule; the tree has hundreds of imports.
    expect(new Set(all.map((e) => e.file)).size).toBeGreaterThan(100);
    expect(all.length).toBeGreaterThan(300);
    expect(all).toContainEqual({
      file: "durable-objects/invocation/invocation.ts",
      specifier: "cloudflare:workers",
    });
  });

  it("keeps every import on an allowed edge", () => {
    expect(violations(all)).toEqual([]);
  });

  it("has no circle of imports", () => {
    expect(circles(all)).toEqual([]);
  });

  it("names a circle of two files and one of three, each once", () => {
    const edge = (file: string, target: string): Edge => ({ file, specifier: "", target });
    expect(
      circles([
        edge("src/b.ts", "src/a.ts"),
        edge("src/a.ts", "src/b.ts"),
        edge("src/x.ts", "src/y.ts"),
        edge("src/y.ts", "src/z.ts"),
        edge("src/z.ts", "src/x.ts"),
        edge("src/z.ts", "src/w.ts"),
      ]),
    ).toEqual(["src/a.ts -> src/b.ts -> src/a.ts", "src/x.ts -> src/y.ts -> src/z.ts -> src/x.ts"]);
  });

  it("reads the layer of the Worker's bindings, which may not name a Durable Object class", () => {
    expect(all.some((e) => e.file === "worker-env.d.ts")).toBe(true);
    expect(
      violations([
        {
          file: "worker-env.d.ts",
          specifier: "./durable-objects/invocation/invocation.ts",
          target: "durable-objects/invocation/invocation.ts",
        },
      ]),
    ).toEqual([
      'worker-env.d.ts imports "./durable-objects/invocation/invocation.ts": worker may import core, protocol, execenv, tools, mcp, worker, not durable-object',
    ]);
  });

  it("refuses an adapter importing another adapter, and the core importing a runtime", () => {
    expect(
      violations([
        {
          file: "src/worker/errors.ts",
          specifier: "../../durable-objects/outcome.ts",
          target: "durable-objects/invocation/outcome.ts",
        },
        { file: "src/core/output/sink.ts", specifier: "node:fs" },
        {
          file: "src/tools/sandbox.ts",
          specifier: "../worker/auth.ts",
          target: "src/worker/auth.ts",
        },
      ]),
    ).toEqual([
      'src/worker/errors.ts imports "../../durable-objects/outcome.ts": worker may import core, protocol, execenv, tools, mcp, worker, not durable-object',
      'src/core/output/sink.ts imports "node:fs": core runs in every runtime',
      'src/tools/sandbox.ts imports "../worker/auth.ts": tools may import core, protocol, execenv, tools, not worker',
    ]);
  });

  it("reads multi-line, type-only, side-effect and dynamic imports", () => {
    const source = [
      'import type {\n  A,\n  B,\n} from "./a.ts";',
      'export { c } from "../c.ts";',
      'import "./side.ts";',
      'const m = await import("./lazy.ts");',
    ].join("\n");
    expect(importsOf(source).sort()).toEqual(["../c.ts", "./a.ts", "./lazy.ts", "./side.ts"]);
  });
});
