/**
 * The one check every configured or caller-supplied endpoint URL goes through: http(s),
 * a host, and no userinfo (a key in a URL ends up in logs and error messages). Callers
 * word the refusal for their audience (a start-up line, a tool error); the rule is here.
 */
type HttpUrlProblem = "not a valid URL" | "not http(s)" | "no host" | "credentials in the URL";

/** On failure `url` is set when the text parsed as a URL at all (to name its scheme or host). */
export type HttpUrlCheck = { ok: true; url: URL } | { ok: false; problem: HttpUrlProblem; url?: URL };

export function checkHttpUrl(raw: string): HttpUrlCheck {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { ok: false, problem: "not a valid URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, problem: "not http(s)", url };
  if (!url.hostname) return { ok: false, problem: "no host", url };
  if (url.username || url.password) return { ok: false, problem: "credentials in the URL", url };
  return { ok: true, url };
}
