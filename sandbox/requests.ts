import { z } from "zod";

import { EXEC_ID_PATTERN } from "../src/execenv/exec-id.ts";

const relPath = z.string().max(4096);
const lineCount = (max: number) => z.number().int().min(1).max(max);

/** Upper bounds on what a caller may ask for, so no request can make the host buffer unbounded text. */
const LIMIT_BOUNDS = {
  maxBytes: 4 * 1024 * 1024,
  maxLines: 100_000,
  timeoutSec: 86_400,
} as const;

export const execRequestSchema = z.object({
  execId: z.string().regex(EXEC_ID_PATTERN, "execId must be 1-128 letters, digits, '_' or '-'"),
  command: z
    .string()
    .min(1)
    .max(256 * 1024),
  cwd: relPath.optional(),
  env: z.record(z.string(), z.string()).optional(),
  timeoutSec: z.number().positive().max(LIMIT_BOUNDS.timeoutSec).optional(),
  limits: z
    .object({
      retain: z.enum(["head", "tail"]).optional(),
      maxBytes: z.number().int().min(0).max(LIMIT_BOUNDS.maxBytes).optional(),
      maxLines: z.number().int().min(0).max(LIMIT_BOUNDS.maxLines).optional(),
    })
    .optional(),
});

export const readRequestSchema = z.object({
  path: relPath.min(1),
  offset: lineCount(Number.MAX_SAFE_INTEGER).optional(),
  limit: lineCount(100_000).optional(),
});

export const grepRequestSchema = z.object({
  pattern: z.string().min(1).max(4096),
  path: relPath.optional(),
  glob: z.string().min(1).max(1024).optional(),
  ignoreCase: z.boolean().optional(),
  literal: z.boolean().optional(),
  limit: lineCount(10_000).optional(),
});

export const globRequestSchema = z.object({
  pattern: z.string().min(1).max(1024),
  path: relPath.optional(),
  limit: lineCount(100_000).optional(),
});
