import { z } from "zod";
import { CODEX_SANDBOXES } from "../../jobs/providers/codex-task.ts";

/** One Codex task as the MCP tools accept it; the service checks models and workdirs again. */
export const codexTaskFields = {
  task: z
    .string()
    .min(1)
    .max(200_000)
    .describe("what Codex should do; it edits files and runs commands in workdir on its own"),
  workdir: z
    .string()
    .min(1)
    .max(4096)
    .describe("absolute path of a git worktree for this job (one job per worktree; not $HOME or /)"),
  model: z
    .string()
    .max(200)
    .optional()
    .describe(
      "gpt-6.1-terra (default), gpt-6.1-sol, gpt-6-astra, gpt-6-sol, gpt-6-luna, gpt-5.6-sol/terra/luna, gpt-5.5, gpt-5.4, gpt-5.4-mini, or an alias: sol, astra, luna, terra, 6-sol, 6.1-sol, 6.1-terra, 5.6-*, 5.5",
    ),
  effort: z.string().max(32).optional().describe("reasoning effort, default low"),
  sandbox: z
    .enum(CODEX_SANDBOXES)
    .optional()
    .describe("workspace-write (default), read-only, or danger-full-access (only with DELEGATE_CODEX_ALLOW_DANGER=1)"),
  timeout_s: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .optional()
    .describe("wall-clock limit from start; the process group is killed after it (default 1800)"),
};

export const codexTask = z
  .object({
    ...codexTaskFields,
    allow_over_quota: z.boolean().optional().describe("run even above DELEGATE_CODEX_QUOTA_REFUSE_PCT"),
  })
  .strict();

export const CODEX_CLOUD_WARNING =
  "Codex is a cloud model on the user's ChatGPT plan: never send PHI or personal data. `done` only means the CLI exited 0 — run the project's tests in the worktree before merging.";
