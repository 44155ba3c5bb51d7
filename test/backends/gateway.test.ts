/**
 * Gateway rules end to end: settings parsed from an environment by config.ts, endpoints
 * built by gateway.ts, real requests through the client to fake gateways that record
 * paths and headers.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { complete } from "../../src/backends/client.ts";
import {
  type GatewaySettings,
  gatewayEndpoint,
  gatewaySettingsFromConfig,
  validateGatewaySettings,
} from "../../src/backends/gateway.ts";
import type { Endpoint, Message, ModelRequest } from "../../src/backends/types.ts";
import { parseConfig } from "../../src/config.ts";
import { whoAnswered } from "../../src/dispatch/answered.ts";
import { isDlError } from "../../src/errors.ts";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";

let code: FakeModel;
let local: FakeModel;
beforeAll(async () => {
  [code, local] = await Promise.all([startFakeModel(), startFakeModel()]);
});
afterAll(() => Promise.all([code.stop(), local.stop()]));

const VK_CODE = "sk-bf-code-0123456789";
const VK_LOCAL = "sk-bf-local-9876543210";
const LITELLM_KEY = "sk-litellm-master-SECRET";

function settings(env: Record<string, string>): GatewaySettings {
  return gatewaySettingsFromConfig(
    parseConfig({
      HOME: process.env.HOME,
      DELEGATE_TEST_ISOLATION: "1",
      DELEGATE_TEST_ISOLATION_ROOT: process.env.DL_TEST_ROOT,
      DELEGATE_LOCAL_KEY: LITELLM_KEY,
      ...env,
    }),
  );
}

const bifrost = (extra: Record<string, string> = {}) =>
  settings({
    DELEGATE_GATEWAY: "bifrost",
    DELEGATE_BIFROST_URL: code.url,
    DELEGATE_BIFROST_VK_CODE: VK_CODE,
    DELEGATE_BIFROST_VK_LOCAL: VK_LOCAL,
    ...extra,
  });

function req(
  endpoint: Endpoint,
  model: string,
  stream: boolean,
  messages: Message[] = [{ role: "user", content: "hi" }],
): ModelRequest {
  return {
    endpoint,
    model,
    system: "sys",
    messages,
    tools: [
      {
        name: "run_bash",
        description: "Run",
        input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
      },
    ],
    max_tokens: 100,
    stream,
    resendReasoning: false,
    promptCaching: false,
    signal: new AbortController().signal,
  };
}

test("litellm (default): DELEGATE_LOCAL_URL, format by prefix, the LiteLLM key", () => {
  const s = settings({ DELEGATE_LOCAL_URL: "http://127.0.0.1:4000/v1/messages" });
  expect(s.kind).toBe("litellm");
  expect(gatewayEndpoint("glm-coding-plan-think", s)).toEqual({
    lane: "litellm",
    url: "http://127.0.0.1:4000/v1/messages",
    format: "anthropic",
    apiKey: LITELLM_KEY,
  });
  expect(gatewayEndpoint("deepseek-v4-flash", s)).toMatchObject({
    url: "http://127.0.0.1:4000/v1/chat/completions",
    format: "openai",
  });
  expect(gatewayEndpoint("local-qwen-3-6-35b", s)).toMatchObject({
    url: "http://127.0.0.1:4000/v1/messages",
    format: "anthropic",
  });
});

test("bifrost with a bad or missing URL stops start-up with one line", () => {
  const bad = ["ftp://h:4010", "http://user:pw@h:4010", "not a url", "http://"];
  for (const url of bad) {
    let err: unknown;
    try {
      bifrost({ DELEGATE_BIFROST_URL: url });
    } catch (e) {
      err = e;
    }
    expect(isDlError(err, "bad_config")).toBe(true);
    expect((err as Error).message).toContain("DELEGATE_BIFROST_URL");
    expect((err as Error).message).not.toContain("\n");
  }
  expect(() => bifrost({ DELEGATE_BIFROST_LOCAL_URL: "file:///etc" })).toThrow(/DELEGATE_BIFROST_LOCAL_URL/);
  expect(() => settings({ DELEGATE_GATEWAY: "bifrost" })).toThrow(/DELEGATE_BIFROST_URL/);
  expect(() => settings({ DELEGATE_GATEWAY: "kong" })).toThrow(/DELEGATE_GATEWAY/);
  expect(() => bifrost({ DELEGATE_BIFROST_API: "grpc" })).toThrow(/DELEGATE_BIFROST_API/);
  // Settings built by hand get the same checks.
  const hand: GatewaySettings = {
    kind: "bifrost",
    localUrl: "http://x",
    apiKey: "",
    bifrostUrl: "http://a:b@h",
    bifrostApi: "litellm",
    vkLocal: "",
    vkCode: "",
  };
  expect(() => validateGatewaySettings(hand)).toThrow(/credentials/);
});

test("a rejected gateway URL is not echoed with its credentials", () => {
  let msg = "";
  try {
    bifrost({ DELEGATE_BIFROST_URL: "http://user:hunter2@h:4010" });
  } catch (e) {
    msg = (e as Error).message;
  }
  expect(msg).toContain("DELEGATE_BIFROST_URL");
  expect(msg).not.toContain("hunter2");
});

test("bifrost base URLs are normalized per lane: never a doubled /litellm or endpoint path", () => {
  for (const base of [
    "http://h:4010",
    "http://h:4010/",
    "http://h:4010/litellm",
    "http://h:4010/litellm/v1/messages",
    "http://h:4010/v1/chat/completions",
  ]) {
    const s = bifrost({ DELEGATE_BIFROST_URL: base });
    expect(gatewayEndpoint("glm-coding-plan", s).url).toBe("http://h:4010/litellm/v1/messages");
    expect(gatewayEndpoint("deepseek-v4-flash", s).url).toBe("http://h:4010/litellm/v1/chat/completions");
    expect(
      gatewayEndpoint("glm-coding-plan", bifrost({ DELEGATE_BIFROST_URL: base, DELEGATE_BIFROST_API: "openai" })).url,
    ).toBe("http://h:4010/v1/chat/completions");
  }
  // A base behind a path prefix keeps it.
  expect(gatewayEndpoint("glm-x", bifrost({ DELEGATE_BIFROST_URL: "https://gw.example/bf/litellm" })).url).toBe(
    "https://gw.example/bf/litellm/v1/messages",
  );
});

test("bifrost lanes: code lane and local lane reach their gateways on /litellm paths with their virtual key, never the LiteLLM key", async () => {
  code.reset();
  local.reset();
  code.always(reply.text("ok"));
  local.always(reply.text("ok"));
  const s = bifrost({ DELEGATE_BIFROST_LOCAL_URL: local.url });
  for (const model of ["glm-coding-plan-think", "deepseek-v4-flash", "local-qwen-3-6-35b", "ornith-7b"]) {
    const ep = gatewayEndpoint(model, s);
    await complete(req(ep, model, true));
  }
  const seen = (f: FakeModel) => f.requests.map((r) => [r.model, r.path, r.headers["x-bf-vk"]]);
  expect(seen(code)).toEqual([
    ["glm-coding-plan-think", "/litellm/v1/messages", VK_CODE],
    ["deepseek-v4-flash", "/litellm/v1/chat/completions", VK_CODE],
  ]);
  expect(seen(local)).toEqual([
    ["local-qwen-3-6-35b", "/litellm/v1/messages", VK_LOCAL],
    ["ornith-7b", "/litellm/v1/messages", VK_LOCAL],
  ]);
  for (const r of [...code.requests, ...local.requests]) {
    expect(r.headers.authorization).toBeUndefined();
    expect(r.headers["x-api-key"]).toBeUndefined();
    expect(JSON.stringify(r.headers)).not.toContain(LITELLM_KEY);
  }

  // No local base: the local lane shares DELEGATE_BIFROST_URL but keeps its own key.
  code.reset();
  code.always(reply.text("ok"));
  await complete(req(gatewayEndpoint("local-qwen-3-6-35b", bifrost()), "local-qwen-3-6-35b", false));
  expect(code.requests.map((r) => [r.path, r.headers["x-bf-vk"]])).toEqual([["/litellm/v1/messages", VK_LOCAL]]);
});

test("DELEGATE_BIFROST_API=openai: every model on /v1/chat/completions, tools and tool turns converted, streaming or not", async () => {
  code.reset();
  local.reset();
  const s = bifrost({ DELEGATE_BIFROST_LOCAL_URL: local.url, DELEGATE_BIFROST_API: "openai" });
  const convo: Message[] = [
    { role: "user", content: "list files" },
    { role: "assistant", content: [{ type: "tool_use", id: "call_1", name: "run_bash", input: { command: "ls" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "a.txt" }] },
  ];
  const cases: [FakeModel, string, boolean][] = [
    [code, "glm-coding-plan-think", true],
    [code, "glm-coding-plan-think", false],
    [local, "local-qwen-3-6-35b", true],
    [local, "local-qwen-3-6-35b", false],
  ];
  for (const [fake, model, stream] of cases) {
    fake.script(model, reply.tool("run_bash", { command: "cat a.txt" }));
    const ep = gatewayEndpoint(model, s);
    expect(ep.format).toBe("openai");
    const res = await complete(req(ep, model, stream, convo));
    expect(res.content).toEqual([
      expect.objectContaining({ type: "tool_use", name: "run_bash", input: { command: "cat a.txt" } }),
    ]);
    expect(res.stop_reason).toBe("tool_use");
    const r = fake.requests.at(-1)!;
    expect(r).toMatchObject({ path: "/v1/chat/completions", format: "openai", stream });
    expect(r.headers["x-bf-vk"]).toBe(fake === code ? VK_CODE : VK_LOCAL);
    const body = r.body as {
      tools: { type: string; function: { name: string } }[];
      messages: { role: string; tool_calls?: unknown[]; tool_call_id?: string }[];
    };
    expect(body.tools[0]).toMatchObject({ type: "function", function: { name: "run_bash" } });
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(body.messages[2]!.tool_calls).toHaveLength(1);
    expect(body.messages[3]!.tool_call_id).toBe("call_1");
  }
});

test("who answered: both readers capture the answering model and routing headers; a different one gives fallback_note", async () => {
  code.reset();
  const s = bifrost();
  const routing = { "x-bifrost-routing-info-provider": "deepseek", "x-bifrost-routing-info-model": "deepseek-flash" };
  for (const [model, stream] of [
    ["glm-5-3-flash", true],
    ["glm-5-3-flash", false],
    ["deepseek-v4-flash", true],
    ["deepseek-v4-flash", false],
  ] as const) {
    code.script(model, reply.text("hi", { model: "deepseek-flash", headers: routing }));
    const res = await complete(req(gatewayEndpoint(model, s), model, stream));
    expect(res.model).toBe("deepseek-flash");
    expect(res.routing).toEqual(routing);
    expect(whoAnswered(model, res).fallback_note).toBe(`answered_by: deepseek-flash (requested ${model})`);
  }
  code.script("glm-coding-plan", reply.text("hi"));
  const same = await complete(req(gatewayEndpoint("glm-coding-plan", s), "glm-coding-plan", true));
  expect(whoAnswered("glm-coding-plan", same)).toEqual({ answered_by: "glm-coding-plan" });
});
