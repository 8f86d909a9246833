/**
 * The file tool route group: `POST /v1/read`, `/v1/grep`, `/v1/glob`, `/v1/find`,
 * `/v1/ls`, `/v1/write` and `/v1/edit`, each over the workspace (read and grep also
 * over the spill folder).
 */
import { Hono } from "hono";
import { OUTPUT_BYTES, OUTPUT_LINES, READ_LINE_CHARS } from "../../src/protocol/index.ts";
import type { SandboxConfig } from "../config.ts";
import type { Jail } from "../jail/jail.ts";
import {
  editRequestSchema,
  findRequestSchema,
  globRequestSchema,
  grepRequestSchema,
  lsRequestSchema,
  parseBody,
  readRequestSchema,
  writeRequestSchema,
} from "../requests.ts";
import { SpillFolder } from "../spill-folder.ts";
import type { Workspace } from "../workspace.ts";
import { editFile, writeFile } from "./change-file.ts";
import { FileQueue } from "./file-queue.ts";
import { findFiles } from "./find-files.ts";
import { listDirectory } from "./list-directory.ts";
import { openInside } from "./open-inside.ts";
import { readLines } from "./read-file.ts";
import { glob, grep } from "./search.ts";

/** File tool defaults (docs/design.md#sandboxes): a read's window and line cut are the tools' own caps. */
const FILE_TOOL_DEFAULTS = {
  readLimit: OUTPUT_LINES,
  readMaxBytes: OUTPUT_BYTES,
  readMaxLineChars: READ_LINE_CHARS,
  grepLimit: 100,
  globLimit: 1000,
  findLimit: 1000,
  lsLimit: 500,
} as const;

/** What the file routes read and change. */
interface FileRouteParts {
  config: SandboxConfig;
  workspace: Workspace;
  spills: SpillFolder;
  jail: Jail;
}

/**
 * The file tool routes, to mount behind the host's auth and body limit.
 * @example app.route("/", fileRoutes({ config, workspace, spills, jail }));
 */
export function fileRoutes(parts: FileRouteParts): Hono {
  const { config, workspace, spills, jail } = parts;
  const search = { workspace, spills, jail, rgPath: config.rgPath };
  const changes = { workspace, queue: new FileQueue(), maxBytes: config.maxWriteBytes };
  const app = new Hono();

  app.post("/v1/read", async (c) => {
    const req = await parseBody(c, readRequestSchema);
    const window = {
      offset: req.offset ?? 1,
      limit: req.limit ?? FILE_TOOL_DEFAULTS.readLimit,
      maxBytes: FILE_TOOL_DEFAULTS.readMaxBytes,
      maxLineChars: req.maxLineChars ?? FILE_TOOL_DEFAULTS.readMaxLineChars,
    };
    const spillName = SpillFolder.nameOf(req.path);
    if (spillName !== null) {
      const handle = await spills.openRead(spillName);
      return c.json(await readLines(handle, req.path, window));
    }
    const abs = await workspace.resolve(req.path);
    const rel = workspace.relative(abs);
    return c.json(await readLines(await openInside(workspace, abs, rel, "file"), rel, window));
  });

  app.post("/v1/grep", async (c) => {
    const req = await parseBody(c, grepRequestSchema);
    const limit = req.limit ?? FILE_TOOL_DEFAULTS.grepLimit;
    return c.json(await grep(search, { ...req, limit }));
  });

  app.post("/v1/glob", async (c) => {
    const req = await parseBody(c, globRequestSchema);
    const limit = req.limit ?? FILE_TOOL_DEFAULTS.globLimit;
    return c.json(await glob(search, { ...req, limit }));
  });

  app.post("/v1/find", async (c) => {
    const req = await parseBody(c, findRequestSchema);
    return c.json(
      await findFiles(workspace, { ...req, limit: req.limit ?? FILE_TOOL_DEFAULTS.findLimit }),
    );
  });

  app.post("/v1/ls", async (c) => {
    const req = await parseBody(c, lsRequestSchema);
    const abs = await workspace.resolve(req.path);
    const limit = req.limit ?? FILE_TOOL_DEFAULTS.lsLimit;
    return c.json(await listDirectory(workspace, abs, workspace.relative(abs), limit));
  });

  app.post("/v1/write", async (c) =>
    c.json(await writeFile(changes, await parseBody(c, writeRequestSchema))),
  );

  app.post("/v1/edit", async (c) =>
    c.json(await editFile(changes, await parseBody(c, editRequestSchema))),
  );

  return app;
}
