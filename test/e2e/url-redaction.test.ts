import { describe, expect, test } from "bun:test";
import { connectDl, runDl } from "../helpers/dl.ts";

/**
 * A key in a gateway URL's query string (some proxies and Azure-style gateways take one)
 * is as secret as DELEGATE_LOCAL_KEY: nothing dl prints may show it. Other parameters stay
 * readable, so the user still recognises their setting.
 */
const QUERY_KEY = "qk-9f8e7d6c5b4a-secret";
const TOKEN = "tok-0a1b2c3d4e5f-secret";

function gateway() {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname !== "/v1/models") return new Response("not found", { status: 404 });
      return Response.json({ data: [{ id: "local-qwen-3-6-35b" }] });
    },
  });
}

describe("URLs with credentials in them are shown redacted", () => {
  test("dl status (JSON and text) and local_backend_status never print the key of DELEGATE_LOCAL_URL", async () => {
    const gw = gateway();
    const env = {
      DELEGATE_LOCAL_URL: `http://127.0.0.1:${gw.port}/v1/messages?api-version=2024-10&key=${QUERY_KEY}`,
    };
    try {
      const json = await runDl(["status", "--json"], env);
      expect(json.code).toBe(0);
      expect(json.stdout + json.stderr).not.toContain(QUERY_KEY);
      const report = JSON.parse(json.stdout) as { config: { gateway: { local_url: string } } };
      expect(report.config.gateway.local_url).toBe(
        `http://127.0.0.1:${gw.port}/v1/messages?api-version=2024-10&key=<redacted>`,
      );
      const text = await runDl(["status"], env);
      expect(text.stdout + text.stderr).not.toContain(QUERY_KEY);

      const s = await connectDl(env);
      try {
        const r = await s.client.callTool({ name: "local_backend_status", arguments: {} });
        expect(JSON.stringify(r)).not.toContain(QUERY_KEY);
      } finally {
        await s.close();
      }
      expect(s.stderr()).not.toContain(QUERY_KEY);
    } finally {
      gw.stop(true);
    }
  });

  test("Bifrost URLs in status and a rejected URL in the start-up error are redacted too", async () => {
    const gw = gateway();
    try {
      const bifrost = {
        DELEGATE_GATEWAY: "bifrost",
        DELEGATE_BIFROST_URL: `http://127.0.0.1:${gw.port}/?access_token=${TOKEN}`,
        DELEGATE_BIFROST_LOCAL_URL: `http://127.0.0.1:${gw.port}/?sig=${TOKEN}&region=eu`,
      };
      const ok = await runDl(["status", "--json"], bifrost);
      expect(ok.stdout + ok.stderr).not.toContain(TOKEN);
      const report = JSON.parse(ok.stdout) as {
        config: { gateway: { bifrost_url: string; bifrost_local_url: string } };
      };
      expect(report.config.gateway.bifrost_url).toContain("access_token=<redacted>");
      expect(report.config.gateway.bifrost_local_url).toContain("sig=<redacted>&region=eu");

      const refused = await runDl(["status"], { ...bifrost, DELEGATE_BIFROST_URL: `ftp://h/?api_key=${TOKEN}` });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("DELEGATE_BIFROST_URL");
      expect(refused.stderr).toContain("api_key=<redacted>");
      expect(refused.stderr).not.toContain(TOKEN);
    } finally {
      gw.stop(true);
    }
  });
});
