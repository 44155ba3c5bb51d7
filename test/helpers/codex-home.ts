import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The pinned real CLI (npm devDependency @openai/codex). */
export const CODEX_BIN = join(import.meta.dir, "../../node_modules/.bin/codex");

/** The variable the fake provider's env_key names; the value is not a secret. */
export const FAKE_TOKEN_VAR = "DL_FAKE_RESPONSES_TOKEN";

/**
 * A CODEX_HOME whose config.toml points the CLI at a fake Responses server through a
 * custom provider, with the CLI's own retries off so every failure reaches dl as is.
 */
export function makeCodexHome(dir: string, baseUrl: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "config.toml"),
    [
      `model_provider = "fake"`,
      ``,
      `[model_providers.fake]`,
      `name = "fake responses"`,
      `base_url = "${baseUrl}"`,
      `env_key = "${FAKE_TOKEN_VAR}"`,
      `wire_api = "responses"`,
      `request_max_retries = 0`,
      `stream_max_retries = 0`,
      ``,
    ].join("\n"),
  );
  return dir;
}

/** What a job's child sees: a plain PATH (node for the npm wrapper), HOME, the token. */
export function codexChildEnv(home: string): Record<string, string> {
  return { PATH: `${join(import.meta.dir, "../../node_modules/.bin")}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: "C.UTF-8", [FAKE_TOKEN_VAR]: "fake-token-not-secret" };
}

/** Simulates `codex login` rewriting the credentials. */
export function writeAuthJson(codexHome: string, marker: string): void {
  writeFileSync(join(codexHome, "auth.json"), JSON.stringify({ auth_mode: "chatgpt", tokens: { marker } }), { mode: 0o600 });
}

/** A rollout file as codex writes it, with one token_count event carrying rate limits. */
export function writeRollout(codexHome: string, day: string, name: string, lines: object[]): string {
  const [y, m, d] = day.split("-");
  const dir = join(codexHome, "sessions", y!, m!, d!);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `rollout-${day}T00-00-00-${name}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return file;
}

export function tokenCountEvent(at: Date, primaryPct: number, secondaryPct: number | null, resetInS = 3600): object {
  const resets = Math.floor(at.getTime() / 1000) + resetInS;
  return {
    timestamp: at.toISOString(),
    type: "event_msg",
    payload: {
      type: "token_count",
      info: { total_token_usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } },
      rate_limits: {
        limit_id: "codex",
        primary: { used_percent: primaryPct, window_minutes: 300, resets_at: resets },
        secondary: secondaryPct === null ? null : { used_percent: secondaryPct, window_minutes: 10080, resets_at: resets + 86400 },
      },
    },
  };
}
