import { READ_FILE_DEFAULTS, type ReadFileSettings, readFileTool } from "./read-file.ts";
import { type RunBashSettings, runBashTool } from "./run-bash.ts";
import type { AgentTool } from "./types.ts";
import { WRITE_FILE_DEFAULTS, type WriteFileSettings, writeFileTool } from "./write-file.ts";

export type ToolSettings = {
  read: ReadFileSettings;
  write: WriteFileSettings;
  bash: RunBashSettings;
};

/** The agent's tool set, by name. run_bash is left out entirely when disabled. */
export function buildTools(
  s: Partial<Pick<ToolSettings, "read" | "write">> & { bash: RunBashSettings },
): Map<string, AgentTool> {
  const tools = [readFileTool(s.read ?? READ_FILE_DEFAULTS), writeFileTool(s.write ?? WRITE_FILE_DEFAULTS)];
  if (s.bash.enabled) tools.push(runBashTool(s.bash));
  return new Map(tools.map((t) => [t.spec.name, t]));
}
