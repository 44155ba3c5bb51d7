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

const REDACTED_PART = "<redacted>";

/** Query or fragment parameter names that carry credentials (matched anywhere in the name). */
const SECRET_PARAM = /key|token|secret|passw|pwd|signature|credential|auth|session|cookie|jwt|bearer/i;
/** Short names that are credentials only as a whole word (`sig`, `pass`, `code`…). */
const SECRET_WORD = /^(sig|pass|code|sas|x-amz-security-token|x-goog-signature)$/i;

function secretParam(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    // keep the raw name
  }
  return SECRET_PARAM.test(decoded) || decoded.split(/[-_.]/).some((part) => SECRET_WORD.test(part));
}

/**
 * A URL (or any text holding URLs) as it may be shown in status, errors and logs:
 * userinfo and the values of credential-looking query and fragment parameters
 * (`key`, `api_key`, `access_token`, `sig`, `password` …) are replaced by <redacted>;
 * everything else stays as written, so the user still recognises their setting. The one
 * redaction every place that shows a URL uses.
 */
export function redactUrl(text: string): string {
  return text
    .replace(/\/\/[^/?#\s]*@/g, `//${REDACTED_PART}@`)
    .replace(/([?&;#])([^=&;#\s]+)=([^&;#\s]*)/g, (whole, sep: string, name: string) =>
      secretParam(name) ? `${sep}${name}=${REDACTED_PART}` : whole,
    );
}
