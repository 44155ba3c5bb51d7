/**
 * DELEGATE_GATEWAY: which gateway a model's requests leave through, at which URL, with
 * which headers. Explicit `delegate_to_provider` URLs never come here: they keep their own
 * rules and SSRF guard (ssrf.ts); these gateways are the user's own configuration.
 *
 * - `litellm` (default): DELEGATE_LOCAL_URL, format by model prefix (route.ts), and
 *   DELEGATE_LOCAL_KEY as the API key. Today's behaviour.
 * - `bifrost`: two lanes. The local lane (`local-*`, `ornith*`) goes to
 *   DELEGATE_BIFROST_LOCAL_URL when set, else DELEGATE_BIFROST_URL, with
 *   DELEGATE_BIFROST_VK_LOCAL; every other model is the code lane, DELEGATE_BIFROST_URL with
 *   DELEGATE_BIFROST_VK_CODE. A virtual key travels in `x-bf-vk`, the header Bifrost reads
 *   for governance. DELEGATE_LOCAL_KEY is NOT sent to Bifrost: Bifrost treats an
 *   `Authorization` / `x-api-key` that is not a virtual key as a direct provider key, so
 *   forwarding the LiteLLM key would at best be ignored and at worst be used upstream.
 *   - DELEGATE_BIFROST_API=litellm (default): Bifrost's LiteLLM-compatible routes,
 *     `<base>/litellm/v1/messages` or `<base>/litellm/v1/chat/completions` by prefix.
 *   - DELEGATE_BIFROST_API=openai: every model to `<base>/v1/chat/completions` in OpenAI
 *     format (the openai client converts messages and tools, streaming or not).
 *   A base may be given bare (`http://h:4010`), with `/litellm`, or as a full endpoint URL;
 *   it is normalized per lane so paths are never doubled.
 */
import type { Config } from "../config.ts";
import { DlError } from "../errors.ts";
import { checkHttpUrl } from "../url.ts";
import { ENDPOINT_SUFFIXES, endpointUrl, formatForModel } from "./route.ts";
import type { Endpoint, WireFormat } from "./types.ts";

const BIFROST_VK_HEADER = "x-bf-vk";

export type GatewaySettings = {
  kind: "litellm" | "bifrost";
  /** DELEGATE_LOCAL_URL */
  localUrl: string;
  /** DELEGATE_LOCAL_KEY (litellm only) */
  apiKey: string;
  bifrostUrl?: string | undefined;
  bifrostLocalUrl?: string | undefined;
  bifrostApi: "litellm" | "openai";
  vkLocal: string;
  vkCode: string;
};

export function gatewaySettingsFromConfig(c: Config): GatewaySettings {
  const g = c.gateway;
  return {
    kind: g.kind,
    localUrl: g.localUrl,
    apiKey: c.backend.key,
    bifrostUrl: g.bifrostUrl,
    bifrostLocalUrl: g.bifrostLocalUrl,
    bifrostApi: g.bifrostApi,
    vkLocal: g.vkLocal,
    vkCode: g.vkCode,
  };
}

type Lane = "litellm" | "bifrost-local" | "bifrost-code";

export type GatewayEndpoint = Endpoint & { lane: Lane };

/** The local lane: models that must stay on the user's own hardware. */
export function isLocalLane(model: string): boolean {
  const m = model.trim().toLowerCase();
  return m.startsWith("local-") || m.startsWith("ornith");
}

/** Why a gateway URL is unusable, or undefined. Never echoes userinfo, path or query. */
function urlProblem(raw: string): string | undefined {
  const c = checkHttpUrl(raw);
  if (c.ok) return undefined;
  if (c.problem === "credentials in the URL") return `${c.problem} (put keys in DELEGATE_BIFROST_VK_* instead)`;
  return c.problem;
}

/** Checks what start-up must refuse; one DlError("bad_config") line naming the variable. */
export function validateGatewaySettings(s: GatewaySettings): void {
  const check = (name: string, value: string | undefined, required: boolean) => {
    if (value === undefined || value.trim() === "") {
      if (required)
        throw new DlError(
          "bad_config",
          `${name} is unset: DELEGATE_GATEWAY=${s.kind} needs it (e.g. http://127.0.0.1:4010)`,
          { variable: name },
        );
      return;
    }
    const p = urlProblem(value);
    if (p)
      throw new DlError(
        "bad_config",
        `${name} is invalid: ${p}; expected an http(s) URL with a host, e.g. http://127.0.0.1:4010`,
        { variable: name },
      );
  };
  if (s.kind === "litellm") {
    check("DELEGATE_LOCAL_URL", s.localUrl, true);
    return;
  }
  if (s.kind !== "bifrost")
    throw new DlError("bad_config", `DELEGATE_GATEWAY=${String(s.kind)} is invalid: expected litellm or bifrost`, {
      variable: "DELEGATE_GATEWAY",
    });
  if (s.bifrostApi !== "litellm" && s.bifrostApi !== "openai") {
    throw new DlError(
      "bad_config",
      `DELEGATE_BIFROST_API=${String(s.bifrostApi)} is invalid: expected litellm or openai`,
      { variable: "DELEGATE_BIFROST_API" },
    );
  }
  check("DELEGATE_BIFROST_URL", s.bifrostUrl, true);
  check("DELEGATE_BIFROST_LOCAL_URL", s.bifrostLocalUrl, false);
}

/** A lane's base with any endpoint suffix and `/litellm` removed (query kept). */
function laneBase(raw: string): URL {
  const u = new URL(raw.trim());
  let path = u.pathname.replace(/\/+$/, "");
  for (const suffix of ENDPOINT_SUFFIXES) {
    if (path.endsWith(suffix)) {
      path = path.slice(0, -suffix.length);
      break;
    }
  }
  path = path.replace(/\/+$/, "").replace(/\/litellm$/, "");
  u.pathname = path === "" ? "/" : path;
  return u;
}

function withPath(base: URL, extra: string): string {
  const u = new URL(base.toString());
  u.pathname = u.pathname.replace(/\/+$/, "") + extra;
  return u.toString();
}

/**
 * Where a model's requests go under the configured gateway. Throws bad_config for
 * settings validateGatewaySettings would refuse (config normally caught them at start-up).
 */
export function gatewayEndpoint(model: string, s: GatewaySettings): GatewayEndpoint {
  validateGatewaySettings(s);
  if (s.kind === "litellm") {
    const format = formatForModel(model);
    return { lane: "litellm", url: endpointUrl(s.localUrl, format), format, apiKey: s.apiKey };
  }
  const local = isLocalLane(model);
  const lane: Lane = local ? "bifrost-local" : "bifrost-code";
  const rawBase = local && s.bifrostLocalUrl ? s.bifrostLocalUrl : s.bifrostUrl!;
  const vk = local ? s.vkLocal : s.vkCode;
  const base = laneBase(rawBase);
  let format: WireFormat;
  let url: string;
  if (s.bifrostApi === "openai") {
    format = "openai";
    url = withPath(base, "/v1/chat/completions");
  } else {
    format = formatForModel(model);
    url = endpointUrl(withPath(base, "/litellm"), format);
  }
  const ep: GatewayEndpoint = { lane, url, format, apiKey: "" };
  if (vk) ep.headers = { [BIFROST_VK_HEADER]: vk };
  return ep;
}
