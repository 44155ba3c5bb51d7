/**
 * The one redaction owner: what counts as a secret, the one marker it is replaced by, and
 * the functions every channel that leaves the process or reaches the disk goes through
 * (MCP frames, stderr, command output, job rows, state files; see docs/SECURITY.md).
 *
 * A secret is (1) a value dl holds or was given: its own keys, a provider's passthrough
 * values, a delegate_to_provider key learned at run time, the value of any variable
 * whose name says key, token, secret or password (`knowSecrets`, fed by config.ts and by
 * whoever learns a key); or (2) a string shaped like a key whoever holds it: `sk-…`,
 * `ghp_…`, a JWT, `Authorization: Bearer …`, `NAME_KEY=…`, a URL's userinfo or its
 * `?api_key=` value. A false positive costs a few characters of output; a miss puts a
 * key where another user or a model can read it.
 *
 * Every pattern is JSON-safe: a match never includes a quote or a backslash (or only a
 * whole `\n` escape), so redacting serialized JSON leaves it parseable. Every quantifier
 * is bounded: hostile output (a megabyte of one letter) costs linear time.
 */
export const REDACTED = "<redacted>";

/** Known values shorter than this are placeholders ("none", "dummy"), not credentials: cutting them garbles text. */
export const MIN_SECRET_CHARS = 8;

/** A variable whose name says it holds a credential (AUTHOR is a person, PWD a folder). */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSW|CREDENTIAL|COOKIE|SESSION|AUTH(?!ORS?(?:_|$))|(?:^|_)VK(?:_|$)/i;

/** Values of such variables that are no credential whatever the name: booleans, numbers, paths. */
const NOT_A_SECRET = /^(?:true|false|yes|no|on|off|none|null|\d{1,12}|[~.]?\/\S*)$/i;

const SHAPES: readonly RegExp[] = [
  /\b[spr]k-[A-Za-z0-9_-]{12,4096}/g,
  /\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,4096}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,4096}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,4096}/g,
  /\bglpat-[A-Za-z0-9_-]{20,4096}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,4096}/g,
  /\bAIza[0-9A-Za-z_-]{30,4096}/g,
  /\bya29\.[0-9A-Za-z_-]{20,4096}/g,
  /\b(?:hf|gsk|npm)_[A-Za-z0-9]{30,4096}/g,
  /\bxai-[A-Za-z0-9]{20,4096}/g,
  // A JSON Web Token: header and payload are base64url JSON, so both start "eyJ".
  /\beyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{0,4096}/g,
  // A PEM private key, raw or with its line breaks escaped inside a JSON string.
  /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:[A-Za-z0-9+/=\s]|\\[rn]){0,16384}(?:-----END [A-Z ]{0,40}PRIVATE KEY-----)?/g,
];

/**
 * A name that says "secret", then `=` or `:`, then the value: the value goes. A value of
 * letters only ("KEY: present", "TOKEN=unset") is a word, not a key: a key has a digit or
 * a symbol.
 */
const NAMED =
  /((?:api[_-]?key|_key|token|secret|password|passwd|credentials?|authorization|x-api-key|x-bf-vk)["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?:(?:bearer|basic|token)[ \t]{1,8})?)(?!(?:bearer|basic|token)[ \t])(?=[^\s"'`,;&\\<>]{0,4096}[0-9_./+=~-])[^\s"'`,;&\\<>]{4,4096}/gi;
const BEARER = /(\bbearer[ \t]{1,8})[A-Za-z0-9._~+/-]{6,4096}=*/gi;

/** A URL's userinfo (`//user:pass@host`). */
const USERINFO = /\/\/[^/?#\s"'`\\<>]{1,1024}@/g;
/** A query or fragment parameter; its value goes when its name says credential. */
const PARAM = /([?&;#])([^=&;#\s"'`\\<>]{1,200})=([^&;#\s"'`\\<>]{1,4096})/g;
/** Parameter names that carry credentials (matched anywhere in the name). */
const SECRET_PARAM = /key|token|secret|passw|pwd|signature|credential|auth|session|cookie|jwt|bearer/i;
/** Short names that are credentials only as a whole word (`sig`, `pass`, `code`…). */
const SECRET_WORD = /^(sig|pass|code|sas|x-amz-security-token|x-goog-signature)$/i;

const known = new Set<string>();
let knownPattern: RegExp | null = null;

/** Whether a variable of this name holds a credential by its name. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** The values of `env` that are secrets by their variable's name (the rule `knowSecrets` is fed). */
export function secretValuesOf(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env).flatMap(([name, v]) =>
    v !== undefined && isSecretName(name) && !NOT_A_SECRET.test(v.trim()) ? [v] : [],
  );
}

/**
 * Adds values to the process's known secrets (config.ts at load; whoever learns a key at
 * run time, before anything could print it). From then on every channel cuts them out.
 */
export function knowSecrets(values: Iterable<string>): void {
  let added = false;
  for (const v of values) {
    const s = v.trim();
    if (s.length < MIN_SECRET_CHARS || known.has(s) || REDACTED.includes(s)) continue;
    known.add(s);
    // The same value as it appears inside a JSON string (a quote or backslash escaped).
    const escaped = JSON.stringify(s).slice(1, -1);
    if (escaped !== s) known.add(escaped);
    added = true;
  }
  if (!added) return;
  // Longest first, so a key that contains another is replaced whole.
  const alternatives = [...known]
    .sort((a, b) => b.length - a.length)
    .map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  knownPattern = new RegExp(alternatives.join("|"), "g");
}

function secretParam(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    // keep the raw name
  }
  return SECRET_PARAM.test(decoded) || decoded.split(/[-_.]/).some((part) => SECRET_WORD.test(part));
}

/** URLs in `text` with their userinfo and credential parameters' values replaced; the rest as written. */
function redactUrls(text: string): string {
  return text
    .replace(USERINFO, `//${REDACTED}@`)
    .replace(PARAM, (whole, sep: string, name: string) => (secretParam(name) ? `${sep}${name}=${REDACTED}` : whole));
}

/** `text` with every secret replaced by REDACTED. */
export function redact(text: string): string {
  let out = knownPattern ? text.replace(knownPattern, REDACTED) : text;
  for (const re of SHAPES) out = out.replace(re, REDACTED);
  out = out.replace(NAMED, `$1${REDACTED}`).replace(BEARER, `$1${REDACTED}`);
  return redactUrls(out);
}

/** Whether `text` holds anything `redact` would cut. */
export function holdsSecret(text: string): boolean {
  return redact(text) !== text;
}

/** Deeper than this a value is not walked but replaced whole: hostile nesting must not overflow the stack. */
const MAX_DEPTH = 256;

/**
 * A JSON value with every string in it (object keys too) redacted, at any depth; the
 * rest as it was. Strings are redacted as they are, before serialization, so a key in a
 * JSON text inside a string (a tool result's `text`) is found unescaped.
 */
export function redactValue<T>(v: T, depth = 0): T {
  if (typeof v === "string") return redact(v) as T;
  if (v === null || typeof v !== "object") return v;
  if (depth > MAX_DEPTH) return REDACTED as T;
  if (Array.isArray(v)) return v.map((x) => redactValue(x, depth + 1)) as T;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v; // not JSON data (a buffer, a date)
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[redact(k)] = redactValue(x, depth + 1);
  return out as T;
}
