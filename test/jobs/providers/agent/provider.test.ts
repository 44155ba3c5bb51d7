import { describe, expect, test } from "bun:test";
import { type DlError, isDlError } from "../../../../src/errors.ts";
import { ProviderEndpoints } from "../../../../src/jobs/providers/agent/endpoints.ts";
import { parseAgentRun } from "../../../../src/jobs/providers/agent/provider.ts";
import { buildAgentLaunch } from "../../../../src/jobs/providers/agent/task.ts";
import type { JobRow } from "../../../../src/store/types.ts";
import { tempDir } from "../../../helpers/dl.ts";
import { runOutput } from "../../helpers.ts";

/** Reading a child `dl run --json`: the result is the answer, and its absence says why. */
const run = (over: Parameters<typeof runOutput>[1]) => runOutput("/nonexistent", over);

const result = {
  success: true,
  final_response: "all good",
  turns: 2,
  bash_calls: 1,
  bash_failures: 1,
  last_bash_exit: 3,
  usage: { input_tokens: 10, output_tokens: 5, cache_read_tokens: 0, cache_write_tokens: 0 },
  model_used: "local-x",
};

describe("parseAgentRun", () => {
  test("a successful result keeps the answer and the measured fields", () => {
    const p = parseAgentRun(run({ stdout: `${JSON.stringify(result)}\n`, stderr: "dl run: turn 1/25: run_bash\n" }));
    expect(p.finalResponse).toBe("all good");
    expect(p.failure).toBeNull();
    expect(p.usage).toMatchObject({ success: true, turns: 2, last_bash_exit: 3, model_used: "local-x" });
  });

  test("a result that says it failed is a failure whose answer leads with the error", () => {
    const bad = { ...result, success: false, final_response: "", error: "backend refused: 401" };
    const p = parseAgentRun(run({ exitCode: 1, stdout: JSON.stringify(bad) }));
    expect(p.failure).toBe("other");
    expect(p.finalResponse).toBe("backend refused: 401");
  });

  test("no result at all: infra when it exited 0, and the end of stderr explains", () => {
    const p = parseAgentRun(run({ stdout: "not json", stderr: "dl: DELEGATE_X is invalid" }));
    expect(p.failure).toBe("infra");
    expect(p.finalResponse).toContain("exited 0 without a result");
    expect(p.finalResponse).toContain("DELEGATE_X is invalid");
    const killed = parseAgentRun(run({ exitCode: null, signal: "SIGKILL" }));
    expect(killed.finalResponse).toContain("was stopped (SIGKILL)");
    expect(killed.failure).toBeNull();
  });
});

describe("a delegate_to_provider job's endpoint", () => {
  const job = (params: Record<string, unknown>, jobDir: string) =>
    ({
      id: "ag-0123456789",
      task: "do it",
      workdir: jobDir,
      model: "provider-model",
      params: JSON.stringify({ agent_name: "helper", ...params }),
    }) as JobRow;

  test("reaches the child only through its environment, once, and never its argv or the row", () => {
    const dir = tempDir("agent-launch");
    const endpoints = new ProviderEndpoints();
    const ref = endpoints.put({ url: "http://127.0.0.1:9/v1/messages", apiKey: "sk-only-in-env", format: "anthropic" });
    const row = job({ provider_ref: ref }, dir);
    const spec = buildAgentLaunch(row, dir, { self: ["dl"], env: { PATH: "/usr/bin" }, endpoints });
    expect(spec.env.DELEGATE_RUN_PROVIDER_KEY).toBe("sk-only-in-env");
    expect(spec.env.DELEGATE_RUN_PROVIDER_URL).toBe("http://127.0.0.1:9/v1/messages");
    expect(spec.argv.join(" ")).not.toContain("sk-only-in-env");
    expect(JSON.stringify(row)).not.toContain("sk-only-in-env");
    // Taken once: a second launch of the same job finds nothing.
    expect(() => buildAgentLaunch(row, dir, { self: ["dl"], env: {}, endpoints })).toThrow();
  });

  test("a job whose endpoint this server does not hold fails saying why, before anything runs", () => {
    const dir = tempDir("agent-launch");
    const endpoints = new ProviderEndpoints();
    let err: unknown;
    try {
      buildAgentLaunch(job({ provider_ref: "00000000-0000-4000-8000-000000000000" }, dir), dir, {
        self: ["dl"],
        env: { DELEGATE_LOCAL_URL: "http://gateway" },
        endpoints,
      });
    } catch (e) {
      err = e;
    }
    expect(isDlError(err)).toBe(true);
    expect((err as DlError).data.failure_kind).toBe("provider_key_lost");
    expect((err as DlError).message).toContain("delegate_to_provider again");
  });

  test("a plain agent job gets no provider variables", () => {
    const dir = tempDir("agent-launch");
    const spec = buildAgentLaunch(job({}, dir), dir, { self: ["dl"], env: {}, endpoints: new ProviderEndpoints() });
    expect(Object.keys(spec.env).filter((k) => k.startsWith("DELEGATE_RUN_PROVIDER_"))).toEqual([]);
  });
});
