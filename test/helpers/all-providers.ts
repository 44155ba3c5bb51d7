import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { codexServeEnv } from "./codex-home.ts";

const FIXTURE = join(import.meta.dir, "..", "fixture");

/**
 * The environment of a dl serve that offers every provider's tools, each against its
 * stand-in: the agent loop against a fake model, the real Codex CLI against a fake
 * Responses API, the fake agy and the fake dsh launcher (with one enabled dsh model),
 * each provider's store under `root`, no stagger. Tests add what is theirs.
 */
export function allProvidersEnv(o: {
  root: string;
  modelUrl: string;
  key: string;
  agentsDir: string;
  codexBaseUrl: string;
}): Record<string, string> {
  const modelsFile = join(o.root, "dsh-models.json");
  writeFileSync(modelsFile, JSON.stringify({ models: { "ds-flash": { model: "deepseek-v4-flash", enabled: true } } }));
  return {
    ...codexServeEnv(o.root, o.codexBaseUrl, join(o.root, "codex-jobs")),
    DELEGATE_LOCAL_URL: o.modelUrl,
    DELEGATE_LOCAL_KEY: o.key,
    DELEGATE_LOCAL_AGENTS_DIR: o.agentsDir,
    DELEGATE_AGENT_STATE_DIR: join(o.root, "agent-jobs"),
    DELEGATE_AGY_BIN: join(FIXTURE, "fake-agy.sh"),
    DELEGATE_GEMINI_ALLOW_DANGER: "1",
    DELEGATE_GEMINI_STATE_DIR: join(o.root, "gemini-jobs"),
    DELEGATE_DSH_LAUNCHER: join(FIXTURE, "fake-dsh.sh"),
    DELEGATE_DSH_MODELS_FILE: modelsFile,
    DELEGATE_DSH_STATE_DIR: join(o.root, "dsh-jobs"),
    DELEGATE_CODEX_STAGGER_S: "0",
    DELEGATE_DSH_STAGGER_S: "0",
    DELEGATE_TOOLS: "all",
  };
}
