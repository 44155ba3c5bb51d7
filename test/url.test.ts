import { describe, expect, test } from "bun:test";
import { sanitizeExcerpt } from "../src/backends/http.ts";
import { redactUrl } from "../src/url.ts";

describe("redactUrl", () => {
  test("credential-looking parameters and userinfo are replaced; the rest stays as written", () => {
    expect(redactUrl("http://h:4000/v1/messages?api-version=2024-10&key=sk-1")).toBe(
      "http://h:4000/v1/messages?api-version=2024-10&key=<redacted>",
    );
    expect(redactUrl("https://user:p@ss@h/x?access_token=a&page=2#id_token=b")).toBe(
      "https://<redacted>@h/x?access_token=<redacted>&page=2#id_token=<redacted>",
    );
    for (const name of ["api_key", "apikey", "X-Api-Key", "token", "client_secret", "password", "passwd", "pwd"])
      expect(redactUrl(`http://h/?${name}=v1`)).toBe(`http://h/?${name}=<redacted>`);
    for (const name of ["sig", "Signature", "X-Amz-Signature", "X-Amz-Security-Token", "auth", "authorization", "code"])
      expect(redactUrl(`http://h/?a=1&${name}=v1`)).toBe(`http://h/?a=1&${name}=<redacted>`);
    // Words that merely contain a short credential word are kept.
    expect(redactUrl("http://h/?design=1&passenger=2&region=eu")).toBe("http://h/?design=1&passenger=2&region=eu");
    // Percent-encoded names are recognised; text around URLs is kept.
    expect(redactUrl("http://h/?%6Bey=s")).toBe("http://h/?%6Bey=<redacted>");
    expect(redactUrl("failed: GET http://a:b@h/?token=t (timeout)")).toBe(
      "failed: GET http://<redacted>@h/?token=<redacted> (timeout)",
    );
    expect(redactUrl("no url here, key=1")).toBe("no url here, key=1");
  });

  test("a backend body that echoes a URL is shown redacted", () => {
    const body = '{"error":"bad request to https://gw.example/v1?api-key=abc123secret"}';
    expect(sanitizeExcerpt(body, [])).toContain("api-key=<redacted>");
    expect(sanitizeExcerpt(body, [])).not.toContain("abc123secret");
  });
});
