/**
 * The one check every configured or caller-supplied endpoint URL goes through: http(s),
 * a host, and no userinfo (a key in a URL ends up in logs and error messages). Callers
 * word the refusal for their audience (a start-up line, a tool error); the rule is here.
 */
export type HttpUrlProblem = "not a valid URL" | "not http(s)" | "no host" | "credentials in the URL";

export type HttpUrlCheck = { ok: true; url: URL } | { ok: false; problem: HttpUrlProblem; scheme?: string };

export function checkHttpUrl(raw: string): HttpUrlCheck {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { ok: false, problem: "not a valid URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, problem: "not http(s)", scheme: url.protocol.replace(/:$/, "") };
  }
  if (!url.hostname) return { ok: false, problem: "no host" };
  if (url.username || url.password) return { ok: false, problem: "credentials in the URL" };
  return { ok: true, url };
}
