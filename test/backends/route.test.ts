import { describe, expect, test } from "bun:test";
import {
  cachingAllowedFor,
  endpointFor,
  endpointUrl,
  formatForModel,
  resendReasoningFor,
  safeHost,
} from "../../src/backends/route.ts";
import { isDlError } from "../../src/errors.ts";

describe("formatForModel", () => {
  test("OpenAI-family prefixes go to chat completions, the rest to messages", () => {
    for (const m of ["deepseek-v4-flash", "openai-o3", "gpt-5", "qwen-max", "DeepSeek-Chat"])
      expect(formatForModel(m)).toBe("openai");
    for (const m of [
      "local-qwen-3-6-35b",
      "glm-coding-plan",
      "claude-sonnet",
      "bedrock-x",
      "anthropic/claude",
      "mimo",
      "qwen3",
    ]) {
      expect(formatForModel(m)).toBe("anthropic");
    }
  });
});

describe("endpointUrl", () => {
  const cases: [string, string, string][] = [
    ["http://localhost:4000", "http://localhost:4000/v1/messages", "http://localhost:4000/v1/chat/completions"],
    ["http://localhost:4000/", "http://localhost:4000/v1/messages", "http://localhost:4000/v1/chat/completions"],
    [
      "http://localhost:4000/v1/messages",
      "http://localhost:4000/v1/messages",
      "http://localhost:4000/v1/chat/completions",
    ],
    [
      "http://localhost:4000/v1/messages/",
      "http://localhost:4000/v1/messages",
      "http://localhost:4000/v1/chat/completions",
    ],
    [
      "http://localhost:4000/v1/chat/completions",
      "http://localhost:4000/v1/messages",
      "http://localhost:4000/v1/chat/completions",
    ],
    ["http://localhost:4000/v1", "http://localhost:4000/v1/messages", "http://localhost:4000/v1/chat/completions"],
    [
      "http://127.0.0.1:4010/litellm",
      "http://127.0.0.1:4010/litellm/v1/messages",
      "http://127.0.0.1:4010/litellm/v1/chat/completions",
    ],
    [
      "http://127.0.0.1:4010/litellm/v1/messages",
      "http://127.0.0.1:4010/litellm/v1/messages",
      "http://127.0.0.1:4010/litellm/v1/chat/completions",
    ],
    [
      "https://api.z.ai/api/anthropic",
      "https://api.z.ai/api/anthropic/v1/messages",
      "https://api.z.ai/api/anthropic/v1/chat/completions",
    ],
    ["https://h/x//", "https://h/x/v1/messages", "https://h/x/v1/chat/completions"],
    [
      "https://h/v1?api-version=2",
      "https://h/v1/messages?api-version=2",
      "https://h/v1/chat/completions?api-version=2",
    ],
  ];
  for (const [base, anth, oai] of cases) {
    test(base, () => {
      expect(endpointUrl(base, "anthropic")).toBe(anth);
      expect(endpointUrl(base, "openai")).toBe(oai);
    });
  }
  test("a non-URL or non-http base is a config error that does not echo the text", () => {
    try {
      endpointUrl("not a url sk-secret", "anthropic");
      throw new Error("expected failure");
    } catch (e) {
      expect(isDlError(e, "bad_config")).toBe(true);
      expect(String((e as Error).message)).not.toContain("sk-secret");
    }
    expect(() => endpointUrl("ftp://h/", "openai")).toThrow(/http\(s\)/);
  });
});

describe("endpointFor", () => {
  test("format from the model, URL converted, headers copied, format override honoured", () => {
    const ep = endpointFor({
      baseUrl: "http://h:1/v1/messages",
      apiKey: "k",
      model: "deepseek-v4",
      headers: { "x-bf-vk": "vk" },
    });
    expect(ep).toEqual({
      url: "http://h:1/v1/chat/completions",
      format: "openai",
      apiKey: "k",
      headers: { "x-bf-vk": "vk" },
    });
    const forced = endpointFor({ baseUrl: "http://h:1", apiKey: "", model: "local-qwen-3", format: "openai" });
    expect(forced.url).toBe("http://h:1/v1/chat/completions");
    expect(endpointFor({ baseUrl: "http://h:1", apiKey: "", model: "local-qwen-3" }).format).toBe("anthropic");
  });
});

test("caching and reasoning policies", () => {
  expect(cachingAllowedFor("glm-5")).toBe(true);
  expect(cachingAllowedFor("anthropic/claude-x")).toBe(true);
  expect(cachingAllowedFor("local-qwen")).toBe(false);
  expect(resendReasoningFor("deepseek-v4", "auto")).toBe(true);
  expect(resendReasoningFor("glm-5", "auto")).toBe(false);
  expect(resendReasoningFor("glm-5", "1")).toBe(true);
  expect(resendReasoningFor("deepseek-v4", "0")).toBe(false);
});

test("safeHost drops credentials, path and query", () => {
  expect(safeHost("https://user:pw@api.example.com:8443/v1?key=sk-1")).toBe("api.example.com:8443");
});
