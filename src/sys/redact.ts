/**
 * The one redaction owner: what counts as a secret, the one marker it is replaced by, and
 * the functions every channel that leaves the process or reaches the disk goes through
 * (MCP frames, stderr, command output, job rows, state files; see docs/SECURITY.md).
 *
 * A secret is (1) a value dl holds or was given: its own keys, a provider's passthrough
 * values, a delegate_to_provider key learned at run time, the value of any variable
 * whose name says key, token, secret or password, and the credentials inside any URL it
 * holds (`knowSecrets`, fed by config.ts and by whoever learns a key), also as they
 * appear URL-encoded or in base64 (a Basic header, a docker `auth`); or (2) a string
 * shaped like a key whoever holds it: `sk-…`, `ghp_…`, a JWT, `Authorization: Bearer …`,
 * `NAME_KEY=…` (any name whose last word says credential), a URL's userinfo or its
 * `?api_key=` value. A false positive costs a few characters of output; a miss puts a
 * key where another user or a model can read it.
 *
 * Every pattern is JSON-safe: a match never includes a quote or a backslash (or only a
 * whole `\n` escape), so redacting serialized JSON leaves it parseable. Every quantifier
 * is bounded: hostile output (a megabyte of one letter) costs linear time.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { cliRanges } from "./redact-cli.ts";
import { NAMED_FORMS, type NamedForm, pemBase64Ranges } from "./redact-forms.ts";
import { withoutTerminalCodes } from "./terminal-codes.ts";

export const REDACTED = "<redacted>";

/** Known values shorter than this are placeholders ("none", "dummy"), not credentials: cutting them garbles text. */
export const MIN_SECRET_CHARS = 8;

/**
 * The one vocabulary of credential words. A variable holds a secret when one appears
 * anywhere in its name (`AWS_SECRET_ACCESS_KEY`, `NPM_CONFIG__AUTH`); the short ones only
 * as a word of their own (`DB_PASS`, `MYSQL_PWD`, `GITHUB_PAT`, `GCP_CREDS`), since
 * `PASSENGER`, `PWD`, `PATH` and `GIT_ASKPASS` are no credentials, nor `AUTHOR` a key.
 */
const SECRET_NAME =
  /KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|COOKIE|SESSION|AUTH(?!ORS?(?:_|$))|^SSHPASS$|(?:^|_)(?:VK|PASS|PAT|CREDS?)(?:_|$)|_PWD(?:_|$)/i;
/**
 * In text (`name: value`, `"name": "value"`, `--name value`) the same words count when
 * the name ends with one: `api_key`, `DB_PASS`, `x-bf-vk`, `_authToken`; not
 * `input_tokens` or `session_id`, whose values are figures and ids. A bare `key` is a
 * word of every data format, so a key needs a word before it (`api_key`, `private-key`).
 */
const SECRET_LAST_WORD =
  /(?:TOKEN|SECRET|SECRET_?STRING|PASSW(?:OR)?D|PASSPHRASE|CREDENTIALS?|COOKIE|AUTHORIZATION|(?:_|API|SECRET|PRIVATE|ACCESS)KEY|(?:^|_)(?:AUTH|VK|PASS|PWD|PAT|CREDS?))$/i;

/**
 * A name assigned as a variable is (`SECRET_THING=…` in a `.env`, `env` output): the
 * variable rule decides, and as for the environment a figure or a path is no secret.
 * `KEY: …` is a heading or a field, not an assignment: the last-word rule decides.
 */
const VARIABLE = /^[A-Z][A-Z0-9_]*$/;

/** A name as its words: `dbPass`, `x-bf-vk` and `a.b` are `db_Pass`, `x_bf_vk`, `a_b`. */
const words = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/[-.\s]/g, "_");

/** Values of such variables that are no credential whatever the name: booleans, numbers. */
const NOT_A_SECRET = /^(?:true|false|yes|no|on|off|none|null|\d{1,12})$/i;
/**
 * Paths looked up per call (of redact, learnNamed, secretValuesOf): past it a value shaped
 * like a path is cut as a secret, so text naming thousands of them costs no more.
 */
const PATH_LOOKS_PER_CALL = 32;
let pathLooksLeft = PATH_LOOKS_PER_CALL;

/** A value written as a path: `/…`, `./…`, `~/…`. */
const PATH_SHAPED = /^[~.]?\/\S*$/;

/**
 * Whether a credential variable's value is no credential: a boolean, a figure, or a path
 * that names an entry of this machine (`SSH_AUTH_SOCK`). The shape alone does not say
 * so: a base64 key starts with `/` once in 64 (an AWS secret key), and `./hunter2` is a
 * password. A path that names nothing is cut: a few characters of output at most.
 */
function notASecret(value: string): boolean {
  if (NOT_A_SECRET.test(value)) return true;
  if (!PATH_SHAPED.test(value) || pathLooksLeft <= 0) return false;
  pathLooksLeft--;
  try {
    return existsSync(value.startsWith("~/") ? join(homedir(), value.slice(2)) : value);
  } catch {
    return false;
  }
}

const SHAPES: readonly RegExp[] = [
  /\b[spr]k-[A-Za-z0-9_-]{12,4096}/g,
  /\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,4096}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,4096}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,4096}/g,
  /\bglpat-[A-Za-z0-9_-]{20,4096}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bxox[abeprs]-[A-Za-z0-9-]{10,4096}/g,
  // Stripe's webhook secret, Slack's app-level token, GitLab's runner, deploy and other tokens,
  // PyPI's API token (a macaroon), Docker Hub's, Atlassian's, Postman's and Doppler's tokens.
  /\bwhsec_[A-Za-z0-9+/]{8,4096}/g,
  /\bxapp-\d{1,4}-[A-Za-z0-9-]{10,4096}/g,
  /\bgl(?:rt|dt|ptt|ft|imt|agent|oas|cbt|soat|ffct)-[A-Za-z0-9_-]{16,4096}/g,
  /\bpypi-AgE[A-Za-z0-9_-]{16,8192}/g,
  /\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{12,4096}/g,
  /\bATATT3[A-Za-z0-9_=-]{12,4096}/g,
  /\bPMAK-[A-Za-z0-9]{8,64}-[A-Za-z0-9]{8,128}/g,
  /\bdp\.(?:st|ct|sa|scim|audit|pt)\.(?:[a-z0-9_-]{1,32}\.)?[A-Za-z0-9]{12,4096}/g,
  /\bAIza[0-9A-Za-z_-]{30,4096}/g,
  /\bya29\.[0-9A-Za-z_-]{20,4096}/g,
  /\b(?:hf|gsk|npm)_[A-Za-z0-9]{30,4096}/g,
  /\bxai-[A-Za-z0-9]{20,4096}/g,
  // More vendors' prefixes: Perplexity, Replicate, Google OAuth client secrets, Vault,
  // Tailscale, SendGrid, Shopify, DigitalOcean, Linear, Grafana, Sentry, Databricks, age.
  // Their random bodies hold a digit; an identifier such as dapiClientConfigurationFactory
  // or r8_saved_register_contents (code, not a key) holds none.
  /\b(?:pplx-|r8_|GOCSPX-|hv[sbr]\.|tskey-[a-z]{1,12}-|shp(?:at|ss|ca|pa)_|dop_v1_|lin_api_|gl(?:sa|c)_|sntry[su]_|dapi)(?=[A-Za-z_-]{0,4095}\d)[A-Za-z0-9_-]{20,4096}/g,
  /\bSG\.[A-Za-z0-9_-]{16,64}\.[A-Za-z0-9_-]{16,128}/g,
  /\bAGE-SECRET-KEY-1[0-9A-Z]{40,80}/g,
  // A webhook URL is its own credential: whoever has it may post.
  /\bhooks\.slack\.com\/services\/[A-Za-z0-9_/-]{16,256}/g,
  // A JSON Web Token: header and payload are base64url JSON, so both start "eyJ".
  /\beyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{0,4096}/g,
  // A PEM private key, raw or with its line breaks escaped inside a JSON string.
  /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:[A-Za-z0-9+/=\s]|\\[rn]){0,16384}(?:-----END [A-Z ]{0,40}PRIVATE KEY-----)?/g,
];

/**
 * A name, then `=` or `:` (JSON's `"name": "` too, also inside a JSON string whose quotes
 * are escaped), or a command line's `--name `: the name is group 1 (its sign group 2) or
 * group 3. Only the name is matched here, so a name that says nothing costs nothing more
 * and hides nothing after it.
 */
const NAME_THEN_VALUE =
  /(?<![A-Za-z0-9_.-])-{0,2}([A-Za-z_][A-Za-z0-9_.-]{0,127})\\?["']?[ \t]{0,8}([:=])[ \t]{0,8}\\?(["']?)(?:(?:bearer|basic|token)[ \t]{1,8})?|(?<![A-Za-z0-9_.-])--([A-Za-z][A-Za-z0-9_.-]{0,127})[ \t]{1,8}(?!-)\\?(["']?)/gi;
/**
 * The run a value after a name that says "secret" (its last word, above) may span, to
 * where its format ends it: a double-quoted value at its closing quote (spaces, `'` and
 * backticks and all: `"it's s3cret9"`), a single-quoted or backticked one at its quote,
 * any other at white space. `&`, `;`, `,`, `<` or `>` end nothing: `PGPASSWORD=Tr0ub4dor&3`
 * is one value, and cutting a few characters too many costs less than leaving a key's
 * tail. No run holds `"` or a backslash, so serialized JSON stays JSON.
 */
const RUN_IN_DOUBLE = /[^"\\\r\n]{1,4096}/y;
const RUN_IN_SINGLE = /[^'"`\\\r\n]{1,4096}/y;
const RUN_BARE = /[^\s"'`\\]{1,4096}/y;
/**
 * The same runs holding whole escapes (JSON's `\u0026`, `\/`, `\"`; a shell's `\$`, `\&`, as
 * `declare -p` and `printf %q` write them), read from an opening that is no escape itself: the
 * value is cut whole, not to its first backslash. A line break's escape ends the value.
 */
const RUN_IN_DOUBLE_ESCAPED = /(?:[^"\\\r\n]|\\u[0-9A-Fa-f]{4}|\\[^nru\r\n]){1,4096}/y;
const RUN_BARE_ESCAPED = /(?:[^\s"'`\\]|\\u[0-9A-Fa-f]{4}|\\[^\s"nrtbfu]){1,4096}/y;
/** An XML element's text, to the element's end (`<password>v</password>`). */
const RUN_IN_ELEMENT = /[^<"\\\r\n]{1,4096}/y;
/**
 * A header whose whole value is the credential (every cookie of the line may be a
 * session): its run is the rest of the line, up to a quote that may have opened before
 * it (`curl -H 'Cookie: a=1'`). Only when the value reads as one: cookies are `name=value`,
 * an authorization is a scheme and a credential; prose after `Authorization:` is not.
 */
const RUN_TO_LINE_END = /[^"'\\\r\n]{1,4096}/y;
const WHOLE_LINE_HEADER = /^(?:set-)?cookie$|^(?:proxy-)?authorization$/i;
const HEADER_VALUE = { cookie: /=/, authorization: /^\S+[ \t]+\S{6,}/ };

/** Whether `value` (the rest of a whole-line header's line) reads as that header's value. */
function headerValue(name: string, value: string): boolean {
  return /cookie$/i.test(name) ? HEADER_VALUE.cookie.test(value) : HEADER_VALUE.authorization.test(value);
}
/**
 * A key has a digit or a symbol (`Blue!Sky#Harbor` too): a value of letters only ("KEY:
 * present", "TOKEN=unset", "present," before the rest of a sentence, JSON's `null}`) is a word.
 */
const KEYLIKE = /[0-9_./+=~!@#$%^&*?-]/;
const keylike = (run: string) => KEYLIKE.test(run.replace(/[;,.&)\]}!?]+$/, ""));
/** How far before a run's end a later name may start whose value the run's end cuts short (a name, its sign, a quote). */
const NAME_REACH = 160;

/**
 * The value at `at` (after a name; `quote` opened it, or ""; `header`: a whole-line
 * header's name, or ""): what is cut, or null when it is no credential, and where its run ends. A run
 * that holds the marker of a cut made before (a learned value inside it) is cut whole, and
 * only its own characters are learned: a second pass changes nothing.
 */
function valueAt(
  text: string,
  at: number,
  quote: string,
  header: string,
): { value: string | null; pieces: string[]; end: number } {
  const run = quote === '"' ? RUN_IN_DOUBLE : quote ? RUN_IN_SINGLE : header ? RUN_TO_LINE_END : RUN_BARE;
  const re = withEscapes(text, at, quote, run);
  re.lastIndex = at;
  let m = re.exec(text);
  if (m && run === RUN_TO_LINE_END && !headerValue(header, m[0])) {
    RUN_BARE.lastIndex = at;
    m = RUN_BARE.exec(text);
  }
  if (!m) return { value: null, pieces: [], end: at };
  // A bare run's trailing `, ; ) ] }` closes what holds it (JSON, a call, a statement): not cut.
  if (re === RUN_BARE || re === RUN_BARE_ESCAPED) {
    const core = withoutClosers(m[0]);
    if (core.length > 0 && core.length < m[0].length)
      m = Object.assign([core], { index: m.index, input: m.input }) as RegExpExecArray;
  }
  const end = at + m[0].length;
  const written = m[0].split(REDACTED).filter((p) => p.trim() !== "");
  // Learned as written and as read: `pw\u0026x`, `pw\&x` and `pw&amp;x` are `pw&x`, then cut in every form.
  const pieces = [...written, ...readForms(written)];
  if (pieces.length === 0) return { value: null, pieces, end };
  if (m[0].includes(REDACTED)) return { value: m[0], pieces, end };
  const ok = m[0].length >= 4 && keylike(m[0]);
  return { value: ok ? m[0] : null, pieces, end };
}

/**
 * The run a value at `at` may span (`run`, its format's): escapes and all unless what
 * opened it was escaped itself (`\"password\": \"v\"` inside a JSON string, whose own end
 * is an escape); an element's text (`quote` "<") to the element's end.
 */
function withEscapes(text: string, at: number, quote: string, run: RegExp): RegExp {
  const escaped = text[at - 1 - quote.length] === "\\";
  if (quote === "<") return RUN_IN_ELEMENT;
  if (run === RUN_IN_DOUBLE) return escaped ? RUN_IN_DOUBLE : RUN_IN_DOUBLE_ESCAPED;
  return run === RUN_BARE && !escaped ? RUN_BARE_ESCAPED : run;
}

/**
 * A run's value as a shell or a connection string ends it, learned beside the whole run:
 * `export DB_PASS=Mn3bVc8xZa;` and `Password=Qw7rTz4pLk;Database=app` name `Mn3bVc8xZa` and
 * `Qw7rTz4pLk` when they come again alone (the run was cut whole, to its white space).
 */
const firstField = (piece: string) => piece.split(/[;,&]/)[0]!.trim();

/** A bare run without the `, ; ) ] }` that end it, a bracket kept when the run opened it (`os.environ[K]`). */
function withoutClosers(run: string): string {
  let end = run.length;
  for (; end > 0; end--) {
    const c = run[end - 1]!;
    const opener = c === ")" ? "(" : c === "]" ? "[" : c === "}" ? "{" : "";
    if (!",;".includes(c) && !(opener && !run.slice(0, end - 1).includes(opener))) break;
  }
  return run.slice(0, end);
}

/** A URL, a host name (with a port and a path), or a path: a place, not a secret of its own. */
const PLACE_SHAPED = /^(?:[a-z][a-z0-9+.-]*:\/\/\S+|[\w-]+(?:\.[\w-]+)+(?::\d+)?(?:\/\S*)?|\/[\w./-]+)$/i;

const JSON_STRUCTURE = /^(?:[[{]|(?:true|false|null)(?![\w-]))/;
const JSON_NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** `text` with the value of every `name = value` whose name says credential replaced (and noted in `seen`). */
function redactNamed(text: string, seen: string[]): string {
  let out = "";
  let done = 0;
  NAME_THEN_VALUE.lastIndex = 0;
  for (let m = NAME_THEN_VALUE.exec(text); m; m = NAME_THEN_VALUE.exec(text)) {
    const name = m[1] ?? m[4] ?? "";
    const variable = m[2] === "=" && VARIABLE.test(name);
    if (variable ? !isSecretName(name) : !SECRET_LAST_WORD.test(words(name))) continue;
    const quote = m[3] || m[5] || "";
    if (!quote && m[2] === "=" && inUrlQuery(text, m.index)) continue;
    const at = NAME_THEN_VALUE.lastIndex;
    // A JSON key's unquoted value: an object, an array, true, false or null holds no key of its own.
    const keyQuote = /(\\?["'])[ \t]*[:=]/.exec(m[0])?.[1] ?? "";
    if (!quote && keyQuote && JSON_STRUCTURE.test(text.slice(at, at + 6))) continue;
    const header = m[2] === ":" && WHOLE_LINE_HEADER.test(name) ? name : "";
    const { value, pieces, end } = valueAt(text, at, quote, header);
    if (!value || (variable && notASecret(value))) {
      // A later name inside a run whose value failed has a part of it for a value, failing too:
      // only one near its end can still open a value of its own. Each character is read a bounded number of times.
      NAME_THEN_VALUE.lastIndex = Math.max(at, end - NAME_REACH);
      continue;
    }
    // `NEXTAUTH_URL=https://…`, `AUTH_DOMAIN=app.example.org`: a place, cut where it is named
    // (its name says auth) but not learned: its credentials, if any, the URL rule learns.
    if (!(variable && !SECRET_LAST_WORD.test(words(name)) && PLACE_SHAPED.test(value)))
      seen.push(...pieces, ...(header ? [] : pieces.map(firstField)));
    // A JSON number is cut to a string, so the JSON still parses.
    const json = !quote && keyQuote !== "'" && keyQuote !== "" && JSON_NUMBER.test(value);
    out += text.slice(done, at) + (json ? `${keyQuote}${REDACTED}${keyQuote}` : REDACTED);
    done = NAME_THEN_VALUE.lastIndex = at + value.length;
  }
  return done === 0 ? text : out + text.slice(done);
}

/**
 * What a cut value's pieces teach: each as written and as read one level down (`pw\u0026x`,
 * `pw\&x` and `pw&amp;x` are `pw&x`, then cut in every form), and with `fields`, what a
 * shell or a connection string ends them at (firstField).
 */
function learnable(pieces: readonly string[], fields: boolean): string[] {
  const all = [...new Set([...pieces, ...readForms(pieces)])];
  return fields ? [...all, ...all.map(firstField)] : all;
}

/** Pieces holding an escape, as read one level down (`pw\u0026x` is `pw&x`). */
function readForms(pieces: readonly string[]): string[] {
  const read = pieces.map((p) => (ESCAPE_START.test(p) ? readOneLevel(p).read : p));
  return read.filter((r, i) => r !== pieces[i]);
}

/** Whether a name says credential: a variable's by the variable rule, any other by its last word. */
const namesSecret = (name: string) => (VARIABLE.test(name) ? isSecretName(name) : SECRET_LAST_WORD.test(words(name)));

/** `text` with the value of each of `form`'s matches whose name says credential cut (and noted in `seen`). */
function redactForm(text: string, seen: string[], form: NamedForm): string {
  let out = "";
  let done = 0;
  form.re.lastIndex = 0;
  for (let m = form.re.exec(text); m; m = form.re.exec(text)) {
    const name = m.groups?.n ?? m.groups?.s ?? "password";
    if (!namesSecret(name)) continue;
    const at = form.re.lastIndex;
    const { value, pieces: read } = valueAt(text, at, form.element ? "<" : (m.groups?.q ?? ""), "");
    // A CDATA section's value ends at its `]]>`.
    const pieces = m.groups?.c ? read.map((p) => p.replace(/\]\]>\s*$/, "")) : read;
    const trimmed = (m.groups?.c ? value?.replace(/\]\]>\s*$/, "") : value)?.trimEnd() ?? "";
    if (!trimmed || (form.oneWord && /\s/.test(trimmed)) || (VARIABLE.test(name) && notASecret(trimmed))) continue;
    seen.push(
      ...learnable(
        pieces.map((p) => p.trim()),
        true,
      ),
    );
    out += text.slice(done, at) + REDACTED;
    done = form.re.lastIndex = at + trimmed.length;
  }
  return done === 0 ? text : out + text.slice(done);
}

/** Whether an escape starts at `i`: a backslash after an even count of them (a pair's second half starts none). */
function startsEscape(text: string, i: number): boolean {
  if (text.charCodeAt(i) !== 92) return false;
  let n = 0;
  while (n < 4096 && text.charCodeAt(i - 1 - n) === 92) n++;
  return n % 2 === 0;
}

/** The length of the backslash escape at `i` (a lone backslash: 1). */
const escapeLength = (text: string, i: number) => Math.max(1, Math.floor(escapeAt(text, i) / 0x200000));

/**
 * A range widened to whole backslash escapes: a value known with a backslash of its own
 * (`ab\` read from JSON's `ab\\`) found where the backslash starts `\"` takes the whole
 * escape, so serialized JSON stays JSON.
 */
function wholeEscapes(text: string, r: [number, number]): [number, number] {
  let [a, b] = r;
  for (let i = Math.max(0, a - 5); i < a; i++)
    if (startsEscape(text, i) && i + escapeLength(text, i) > a) {
      a = i;
      break;
    }
  for (let i = Math.max(a, b - 5); i < b; i++) if (startsEscape(text, i)) b = Math.max(b, i + escapeLength(text, i));
  return [a, b];
}

/** `text` with `ranges` (any order, overlapping) cut whole, their values noted in `seen` when given. */
function cutFound(text: string, found: [number, number][], seen: string[] | null): string {
  if (found.length === 0) return text;
  const ranges = found.map((r) => wholeEscapes(text, r));
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const joined: [number, number][] = [];
  for (const r of ranges) {
    const last = joined.at(-1);
    if (last && r[0] < last[1]) last[1] = Math.max(last[1], r[1]);
    else joined.push([r[0], r[1]]);
  }
  if (seen) for (const [a, b] of joined) seen.push(...learnable(text.slice(a, b).split(REDACTED), true));
  return cutRanges(text, joined);
}

/** `text` with the values of the credential grammars of redact-forms.ts and redact-cli.ts cut (and noted in `seen`). */
function redactForms(text: string, seen: string[]): string {
  let out = text;
  for (const form of NAMED_FORMS) out = redactForm(out, seen, form);
  return cutFound(out, cliRanges(out), seen);
}

/**
 * A name right after a URL's `?` or `&` (not a shell's `&&`): its value ends at the URL's
 * own delimiters, where redactUrls cuts it.
 */
function inUrlQuery(text: string, nameAt: number): boolean {
  const before = text[nameAt - 1];
  return before === "?" || (before === "&" && text[nameAt - 2] !== "&");
}

const BEARER = /(\bbearer[ \t]{1,8})[A-Za-z0-9._~+/-]{6,4096}=*/gi;
/** HTTP's `Basic <base64 of user:password>`, whatever its letters: "basic usage" is prose, since it decodes to no `user:password`. */
const BASIC = /(\bbasic[ \t]{1,8})([A-Za-z0-9+/]{8,4096}={0,2})(?![A-Za-z0-9+/=])/gi;

function cutBasic(text: string, seen: string[]): string {
  return text.replace(BASIC, (whole, scheme: string, b64: string) => {
    if (!/^[\x20-\x7e]+:[\x20-\x7e]*$/.test(Buffer.from(b64, "base64").toString("latin1"))) return whole;
    seen.push(b64);
    return `${scheme}${REDACTED}`;
  });
}

/**
 * A URL's userinfo (`//user:pass@host`); a password holding `/`, `?` or `#` too (`//bob:ab/cd@h`),
 * unless what follows the colon is a port and a path (`//h:8080/@scope/pkg`). Such a password
 * holds no `//`: a scan from one `//` ends at the next, so text of many costs linear time.
 */
const USERINFO =
  /\/\/(?:[^/?#\s"'`\\<>]{1,1024}|[^/?#:@\s"'`\\<>]{1,256}:(?!\d{0,5}(?:[/?#]|$))(?:[^@/\s"'`\\<>]|\/(?!\/)){1,1024})@/g;
/** A query or fragment parameter; its value goes when its name says credential. */
const PARAM = /([?&;#])([^=&;#\s"'`\\<>]{1,200})=([^&;#\s"'`\\<>]{1,4096})/g;
/** Parameter names that carry credentials (matched anywhere in the name). */
const SECRET_PARAM = /key|token|secret|passw|pwd|signature|credential|auth|session|cookie|jwt|bearer/i;
/** Short names that are credentials only as a whole word (`sig`, `pass`, `code`…). */
const SECRET_WORD = /^(sig|pass|code|sas|x-amz-security-token|x-goog-signature)$/i;

/**
 * Known values, each with the forms it is cut in, and the one pattern that finds all
 * their forms, longest first (so a key that contains another is replaced whole).
 */
type Known = { forms: Map<string, readonly string[]>; pattern: RegExp | null };
const knownSet = (): Known => ({ forms: new Map(), pattern: null });

/** Values dl holds or was given (knowSecrets). */
const held = knownSet();
/**
 * Values text named as credentials (`DB_PASS=…` in a `.env` a model or a CLI printed),
 * cut wherever else they appear from then on. They are kept in generations of
 * LEARNED_GENERATION: a value learned recompiles only the youngest generation's pattern
 * (one pattern of 256 values cost ~7 ms to compile at every value learned, ~0.9 ms for
 * 32). Past LEARNED_MAX none is forgotten (text a delegate controls must not make dl
 * forget a secret by naming others): the rest go to `overflow`, found by their first
 * characters, one lookup per character of text and no pattern to make again. Past
 * OVERFLOW_MAX (megabytes of named values) nothing more is learned: a value is still cut
 * where it is named.
 */
const learned: Known[] = [];
const LEARNED_MAX = 256;
const LEARNED_GENERATION = 32;
/** Forms of the values learned past LEARNED_MAX, by their first MIN_SECRET_CHARS characters. */
const overflow = new Map<string, string[]>();
const overflowValues = new Set<string>();
const OVERFLOW_MAX = 16_384;
/**
 * What a named value must look like to be learned: letters, and a digit or a symbol no
 * name or path has (`!@#$%^&*?~`: `Blue!Sky#Harbor`). A figure, a date, a word, a domain or
 * a folder name is not learned (`DB_PASSWORD=shop-backend` must not cut the project's own
 * path everywhere after); it is still cut where it is named. Not code or a template (`os.environ["KEY1"]`,
 * `getenv("X2")`, `${X}`, `$(cmd)`, `%(name)s`, `{{ secrets.T1 }}`, `$VAR1`, `%VAR1%`).
 * A password with `$`, `%`, `*` or brackets of its own is learned.
 */
const CREDIBLE = /^(?=[\s\S]*[A-Za-z])(?=[\s\S]*[0-9!@#$%^&*?~])[\s\S]+$/;
const CODE_SHAPED = /\$[{(]|%\(|\{\{|\}\}|<%|[A-Za-z_][\w.]*(\([^)]*\)|\[[^\]]*\])|^\$\w+$|^%\w+%$/;
const credible = (s: string) => CREDIBLE.test(s) && !CODE_SHAPED.test(s);
/** Counts every change to the known values (a value held or learned): what `redact` remembers was made under one. */
let knownVersion = 0;

/**
 * What `redact` answered for short strings, under the current known-secret pattern. A
 * frame's strings repeat (tools/list holds ~2,100 strings, ~240 of them distinct: "type",
 * "string", "description"…), and each costs ~25 regex passes: a session's frames cost
 * 10-20 ms less of CPU with it. A hit is the answer a fresh call would give: the answer
 * depends only on the text and on the values held and learned, and every change to those
 * (knowSecrets, learn) moves knownVersion, which empties the memo. A fresh call's one
 * side effect is learning the values the text names; a text kept here learned nothing
 * new when its answer was made (`redact` keeps no answer of a call that learned), and
 * nothing learned is forgotten, so a fresh call would learn nothing either. Bounded (a text of at most REMEMBER_MAX_CHARS; at most
 * REMEMBER_BUDGET characters kept in all, ~1 MB): full, it starts again empty.
 */
const remembered = new Map<string, string>();
const REMEMBER_MAX_CHARS = 1024;
const REMEMBER_BUDGET = 256 * 1024;
let rememberedChars = 0;
/** The knownVersion what is remembered was made under. */
let rememberedVersion = 0;

/** Empties the memo when the known values changed since its answers were made. */
function forgetIfKnownChanged(): void {
  if (rememberedVersion === knownVersion) return;
  remembered.clear();
  rememberedChars = 0;
  rememberedVersion = knownVersion;
}

/** Whether a variable of this name holds a credential by its name. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(words(name));
}

/**
 * The values of `env` that are secrets (the rule `knowSecrets` is fed): by their
 * variable's name, and the credentials inside every URL a value holds
 * (`DELEGATE_LOCAL_URL=…?api_key=…`, `HTTPS_PROXY=http://user:pass@…`).
 */
export function secretValuesOf(env: Readonly<Record<string, string | undefined>>): string[] {
  pathLooksLeft = Number.POSITIVE_INFINITY; // dl's own environment: a few values, each looked at
  return Object.entries(env).flatMap(([name, v]) =>
    v === undefined ? [] : [...(isSecretName(name) && !notASecret(v.trim()) ? [v] : []), ...urlSecretsOf(v)],
  );
}

/**
 * The credentials inside the URLs of `text`: a userinfo's password, and its user name
 * when that looks like a key (letters and digits): GitHub's documented form is
 * `https://<token>:x-oauth-basic@…`, Bitbucket's and GitLab's put the token second; a
 * bare userinfo is a token whole. Credential parameters' values.
 */
export function urlSecretsOf(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(USERINFO)) {
    const info = m[0].slice(2, -1);
    const colon = info.indexOf(":");
    if (colon < 0) found.push(info);
    else {
      found.push(info.slice(colon + 1));
      if (credible(info.slice(0, colon))) found.push(info.slice(0, colon));
    }
  }
  for (const m of text.matchAll(PARAM)) if (secretParam(m[2]!)) found.push(m[3]!);
  return found.flatMap((v) => [v, urlDecoded(v)]);
}

function urlDecoded(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/**
 * The ways a known value appears in text without being written as itself: inside a JSON
 * string (a quote or backslash escaped), URL-encoded, as hex, and in base64 or base64url (a Basic
 * header, a docker or npm `auth`): the characters that encode the value alone, at each
 * of the three alignments it can have after whatever was encoded before it.
 */
function encodedForms(s: string): string[] {
  const bytes = Buffer.from(s, "utf8");
  const hex = bytes.toString("hex");
  // A lone surrogate (JSON may carry one) is URL-encoded as U+FFFD, as a UTF-8 printer writes it: encodeURIComponent throws on it.
  const forms = [JSON.stringify(s).slice(1, -1), encodeURIComponent(s.toWellFormed()), hex, hex.toUpperCase()];
  for (let before = 0; before < 3; before++) {
    const b64 = Buffer.concat([Buffer.alloc(before), bytes]).toString("base64");
    const part = b64.slice(Math.ceil((before * 8) / 6), Math.floor(((before + bytes.length) * 8) / 6));
    forms.push(part, part.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return forms.filter((f) => f !== s && f.length >= MIN_SECRET_CHARS);
}

/**
 * Adds values to the process's known secrets (config.ts at load; whoever learns a key at
 * run time, before anything could print it). From then on every channel cuts them out.
 */
export function knowSecrets(values: Iterable<string>): void {
  const changed = new Set<Known>();
  for (const v of values) {
    const s = v.trim();
    if (s.length < MIN_SECRET_CHARS || held.forms.has(s) || REDACTED.includes(s)) continue;
    held.forms.set(s, [s, ...encodedForms(s)]);
    changed.add(held);
    for (const g of learned) if (g.forms.delete(s)) changed.add(g);
  }
  for (const g of changed) compileKnown(g);
}

/** Values `redact` found named as credentials, learned when they look like one; whether any was new. */
function learn(values: readonly string[]): boolean {
  const changed = new Set<Known>();
  let kept = false;
  for (const s of values) {
    if (s.length < MIN_SECRET_CHARS || held.forms.has(s) || isLearned(s)) continue;
    if (!credible(s) || notASecret(s)) continue;
    const young = youngestGeneration();
    if (young) {
      young.forms.set(s, [s, ...encodedForms(s)]);
      changed.add(young);
    } else kept = keepOverflow(s) || kept;
  }
  for (const g of changed) compileKnown(g);
  if (kept) knownVersion++;
  return changed.size > 0 || kept;
}

const isLearned = (s: string) => overflowValues.has(s) || learned.some((g) => g.forms.has(s));

/** The generation a value learned now joins (a new one when the youngest is full), or null past LEARNED_MAX. */
function youngestGeneration(): Known | null {
  const young = learned.at(-1);
  if (young && young.forms.size < LEARNED_GENERATION) return young;
  if (learned.length >= LEARNED_MAX / LEARNED_GENERATION) return null;
  const next = knownSet();
  learned.push(next);
  return next;
}

/** A value learned past LEARNED_MAX, indexed by its forms' first characters; whether it was kept. */
function keepOverflow(s: string): boolean {
  if (overflowValues.size >= OVERFLOW_MAX) return false;
  overflowValues.add(s);
  for (const f of [s, ...encodedForms(s)]) {
    const key = f.slice(0, MIN_SECRET_CHARS);
    overflow.set(key, [...(overflow.get(key) ?? []), f]);
  }
  return true;
}

/** Where the overflow's forms are in `s`: the longest form that starts at each place. */
function overflowRanges(s: string): [number, number][] {
  const out: [number, number][] = [];
  if (overflow.size === 0) return out;
  for (let i = 0; i + MIN_SECRET_CHARS <= s.length; i++) {
    const forms = overflow.get(s.slice(i, i + MIN_SECRET_CHARS));
    if (!forms) continue;
    let end = -1;
    for (const f of forms) if (i + f.length > end && s.startsWith(f, i)) end = i + f.length;
    if (end > i) out.push([i, end]);
  }
  return out;
}

/** Makes `g`'s pattern again from its values' forms; what `redact` remembered was made without it (knownVersion moves). */
function compileKnown(g: Known): void {
  knownVersion++;
  const forms = new Set<string>();
  for (const list of g.forms.values()) for (const f of list) forms.add(f);
  const alternatives = [...forms]
    .sort((a, b) => b.length - a.length)
    .map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  g.pattern = alternatives.length > 0 ? new RegExp(alternatives.join("|"), "g") : null;
}

/** The patterns of every known value: none when nothing is known. */
function knownPatterns(): RegExp[] {
  const out = held.pattern ? [held.pattern] : [];
  for (const g of learned) if (g.pattern) out.push(g.pattern);
  return out;
}

/**
 * Where known values' forms are in `s`: [start, end) ranges in order, those that overlap
 * joined into one (the patterns are separate, so a value one finds may hold or cross a
 * value another finds: both are cut whole).
 */
function knownRanges(s: string, patterns: readonly RegExp[]): [number, number][] {
  const found = overflowRanges(s);
  const sortAfter = patterns.length > 1 || found.length > 0;
  for (const re of patterns)
    for (const m of s.matchAll(re)) if (m[0].length > 0) found.push([m.index, m.index + m[0].length]);
  if (sortAfter) found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const joined: [number, number][] = [];
  for (const r of found) {
    const last = joined.at(-1);
    if (last && r[0] < last[1]) last[1] = Math.max(last[1], r[1]);
    else joined.push(r);
  }
  return joined;
}

function secretParam(name: string): boolean {
  const plain = urlDecoded(name);
  return SECRET_PARAM.test(plain) || plain.split(/[-_.]/).some((part) => SECRET_WORD.test(part));
}

/** URLs in `text` with their userinfo and credential parameters' values replaced (and noted in `seen`); the rest as written. */
function redactUrls(text: string, seen: string[]): string {
  return text
    .replace(USERINFO, (info) => {
      seen.push(...urlSecretsOf(info));
      return `//${REDACTED}@`;
    })
    .replace(PARAM, (whole, sep: string, name: string, value: string) => {
      if (!secretParam(name)) return whole;
      seen.push(value, urlDecoded(value));
      return `${sep}${name}=${REDACTED}`;
    });
}

/**
 * What a printer writes in place of a character: JSON's `\u002d`, `\"`, `\\` or `\/`, a
 * URL's `%2D`, HTML's `&#45;` or `&#x2d;` (up to 6 hex or 7 decimal digits); and line
 * breaks (raw `\n` or `\r\n`, JSON's `\n`, `\r` or `\r\n`), which a wrapping terminal,
 * base64's 76 columns or a chunk written as two lines put inside a value.
 */

/** Whether text may hold an escape at all (most text holds none but line breaks). */
const ESCAPE_START = /[\\%&\n\r]/;

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const isDigit = (c: number) => c >= 48 && c <= 57;

/** How many characters from `i` (at most `max`) pass `ok`. */
function runOf(text: string, i: number, max: number, ok: (c: number) => boolean): number {
  let n = 0;
  while (n < max && i + n < text.length && ok(text.charCodeAt(i + n))) n++;
  return n;
}

/** An escape as one number (no object per escape: escape-dense text is what hostile output is): its length and the code point it stands for, or BREAK. */
const BREAK = -1;
const pack = (len: number, code: number) => len * 0x200000 + Math.min(code, 0x10ffff) + 1;
const digits = (text: string, i: number, n: number, radix: number) => Number.parseInt(text.slice(i, i + n), radix);

/** What a shell's backslash may quote in a word (`declare -p`, `printf %q`): its special characters. */
const SHELL_ESCAPED = "$&!`;|()<>*?[]{}#~' ,=^";
/** HTML's and XML's named entities for the characters they escape. */
const NAMED_ENTITIES: readonly [string, number][] = [
  ["&amp;", 38],
  ["&lt;", 60],
  ["&gt;", 62],
  ["&quot;", 34],
  ["&apos;", 39],
];

/** The named entity starting at `i` of `text` (packed), or 0. */
function namedEntityAt(text: string, i: number): number {
  for (const [entity, code] of NAMED_ENTITIES) if (text.startsWith(entity, i)) return pack(entity.length, code);
  return 0;
}

/** The escape starting at `i` of `text` (packed), or 0. Scanned by character codes: a regex's match objects made a megabyte of `\\` cost seconds. */
function escapeAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 10) return pack(1, BREAK);
  if (c === 13) return text.charCodeAt(i + 1) === 10 ? pack(2, BREAK) : 0;
  if (c === 37) return runOf(text, i + 1, 2, isHex) === 2 ? pack(3, digits(text, i + 1, 2, 16)) : 0;
  if (c === 38) {
    if (text.charCodeAt(i + 1) !== 35) return namedEntityAt(text, i); // &#
    const hex = text[i + 2] === "x" || text[i + 2] === "X";
    const start = i + (hex ? 3 : 2);
    const n = hex ? runOf(text, start, 6, isHex) : runOf(text, start, 7, isDigit);
    if (n === 0 || text[start + n] !== ";") return 0;
    return pack(start + n + 1 - i, digits(text, start, n, hex ? 16 : 10));
  }
  if (c !== 92) return 0;
  const d = text.charCodeAt(i + 1);
  if (d === 117) return runOf(text, i + 2, 4, isHex) === 4 ? pack(6, digits(text, i + 2, 4, 16)) : 0; // \u
  if (d === 34 || d === 92 || d === 47) return pack(2, d); // \" \\ \/
  if (d === 120) return runOf(text, i + 2, 2, isHex) === 2 ? pack(4, digits(text, i + 2, 2, 16)) : 0; // \x
  if (SHELL_ESCAPED.includes(text[i + 1] ?? "\n")) return pack(2, d); // \$ \& \! as printf %q writes them
  if (d === 114) return pack(text.startsWith("\\n", i + 2) ? 4 : 2, BREAK); // \r, \r\n
  return d === 110 ? pack(2, BREAK) : 0; // \n
}

/**
 * Text as read one level down (escapes decoded, breaks dropped), and for each of its
 * characters where it starts and ends in the text it was read from (an escape is at least
 * as long as what it stands for: the text's length bounds both).
 */
type Reading = { read: string; from: Uint32Array; to: Uint32Array };

function readOneLevel(text: string): Reading {
  const from = new Uint32Array(text.length + 1);
  const to = new Uint32Array(text.length + 1);
  const units = new Uint16Array(text.length + 1);
  let n = 0;
  for (let at = 0; at < text.length; ) {
    const e = escapeAt(text, at);
    const len = e === 0 ? 1 : Math.floor(e / 0x200000);
    const code = e === 0 ? text.charCodeAt(at) : (e % 0x200000) - 1;
    if (code > 0xffff) units[n + 1] = 0xdc00 + ((code - 0x10000) & 0x3ff);
    const count = code === BREAK ? 0 : code > 0xffff ? 2 : 1;
    if (count > 0) units[n] = code > 0xffff ? 0xd800 + ((code - 0x10000) >> 10) : code;
    for (let i = 0; i < count; i++, n++) {
      from[n] = at;
      to[n] = at + len;
    }
    at += len;
  }
  let read = "";
  for (let i = 0; i < n; i += 0x2000) read += String.fromCharCode(...units.subarray(i, Math.min(n, i + 0x2000)));
  return { read, from, to };
}

/**
 * How many times text may have been serialized around a value: a CLI's JSON line holding
 * a model's answer that held a gateway's JSON error (Codex's `--json` events, a body
 * written as a string into another body). Text dl serializes itself is redacted before.
 */
const ESCAPE_LEVELS = 4;

/** `text` read one level further than `acc` (a reading of it, or null for none yet), positions mapped back to `text`; null when it holds no further escape. */
function deeper(text: string, acc: Reading | null): Reading | null {
  const cur = acc ? acc.read : text;
  if (!ESCAPE_START.test(cur)) return null;
  const r = readOneLevel(cur);
  if (r.read === cur) return null;
  if (acc)
    for (let i = 0; i < r.read.length; i++) {
      r.from[i] = acc.from[r.from[i]!]!;
      r.to[i] = acc.to[r.to[i]! - 1]!;
    }
  return r;
}

/** `text` with each of `ranges` (in order) cut whole. */
function cutRanges(text: string, ranges: readonly [number, number][]): string {
  let out = "";
  let done = 0;
  for (const [start, end] of ranges) {
    // Two values can meet inside one escape (a pair of surrogates): the rest of the second goes too.
    if (start < done && end <= done) continue;
    out += (start < done ? "" : text.slice(done, start)) + REDACTED;
    done = end;
  }
  return done === 0 ? text : out + text.slice(done);
}

/**
 * `text` with every known value cut, also where it is written with some or all of its
 * characters escaped (once or, serialized again, more) or broken over lines: the value is
 * looked for in the text as read at each level, and what it covers in the text as
 * written is cut whole (whole escapes only, so serialized JSON stays JSON). Every level is
 * read from the text as written, before any cut, and what each finds is cut at once: a
 * shorter value found as written (`Tr0ub4dor`, what a shell ends `Tr0ub4dor&3x` at) does not
 * hide the whole one written escaped (`Tr0ub4dor\u00263x`). Each level is read from the one
 * above, so a level costs one pass.
 */
function cutKnown(text: string, patterns = knownPatterns()): string {
  if (patterns.length === 0) return text;
  const found = knownRanges(text, patterns);
  let reading: Reading | null = null;
  for (let level = 1; level <= ESCAPE_LEVELS; level++) {
    reading = deeper(text, reading);
    if (!reading) break;
    for (const [a, b] of knownRanges(reading.read, patterns)) found.push([reading.from[a]!, reading.to[b - 1]!]);
  }
  return cutFound(text, found, null);
}

/**
 * `text` with every secret replaced by REDACTED. A value this text names as a credential
 * (`DB_PASS=…`, a URL's password) is cut wherever else it appears, here and from now on.
 */
export function redact(text: string): string {
  forgetIfKnownChanged();
  const short = text.length <= REMEMBER_MAX_CHARS;
  if (short) {
    const hit = remembered.get(text);
    if (hit !== undefined) return hit;
  }
  const version = knownVersion;
  const out = redactFresh(text);
  // A call that learned a value moved knownVersion: its result, cut partly under the old
  // values, is not kept; the next call makes it under the new ones.
  if (short && version === knownVersion) {
    rememberedChars += text.length + out.length;
    if (rememberedChars > REMEMBER_BUDGET) {
      remembered.clear();
      rememberedChars = text.length + out.length;
    }
    remembered.set(text, out);
  }
  return out;
}

/** `redact` made from scratch: known values, shapes, named values, URLs; learns what the text names. */
function redactFresh(raw: string): string {
  const out = redactText(raw);
  const shown = withoutTerminalCodes(raw);
  if (shown === raw) return out;
  // A key a terminal shows whole is one key, whatever colour codes split it in the bytes: read
  // as shown too, and where that finds more, the text goes as shown (its colours with the key).
  const cut = redactText(shown);
  return withoutTerminalCodes(out) === cut ? out : cut;
}

/** One reading of `text`: known values, shapes, named values, URLs; learns what it names. */
function redactText(text: string): string {
  pathLooksLeft = PATH_LOOKS_PER_CALL;
  let out = cutKnown(text);
  for (const re of SHAPES) out = out.replace(re, REDACTED);
  out = cutFound(out, pemBase64Ranges(out), null);
  const seen: string[] = [];
  out = redactUrls(cutBasic(redactNamed(redactForms(out, seen), seen).replace(BEARER, `$1${REDACTED}`), seen), seen);
  return learn(seen) ? cutKnown(out) : out;
}

/**
 * Learns the values `text` names as credentials (`DB_PASSWORD=…` in a `.env` a tool read,
 * a URL's password), cutting nothing: called where text enters the process (a tool's
 * result, a model's reply), so every channel that writes after it (progress, the
 * transcript, a job's rows, a child `dl run`'s own files) cuts them from the first time.
 * Learning is per process: what reaches the disk must be written after it, never cleaned
 * up later by a process that did not learn.
 */
export function learnNamed(text: string): void {
  const seen: string[] = [];
  pathLooksLeft = PATH_LOOKS_PER_CALL;
  const shown = withoutTerminalCodes(text);
  redactUrls(cutBasic(redactNamed(redactForms(shown, seen), seen), seen), seen);
  learn(seen);
}

/**
 * An identifier dl keeps to find things again (a workdir, a project, an agent's or a
 * model's name): held values and key shapes cut, never a value learned from text, and it
 * learns nothing. A folder whose name a `.env` also uses as a password is still the folder
 * the job runs in, and a later process (which learned nothing) still finds it.
 */
export function redactIdentifier(text: string): string {
  pathLooksLeft = PATH_LOOKS_PER_CALL;
  let out = cutKnown(text, held.pattern ? [held.pattern] : []);
  for (const re of SHAPES) out = out.replace(re, REDACTED);
  out = cutFound(out, pemBase64Ranges(out), null);
  return redactUrls(cutBasic(redactNamed(redactForms(out, []), []).replace(BEARER, `$1${REDACTED}`), []), []);
}

/** Whether an identifier holds a held key or a key's shape (redactIdentifier). */
export const identifierHoldsSecret = (text: string) => redactIdentifier(text) !== text;

/** Whether `text` holds anything `redact` would cut. */
export function holdsSecret(text: string): boolean {
  return redact(text) !== text;
}

/** Runs of printable ASCII (line breaks and tabs too) at least this long: what `strings` shows of a binary file. */
const TEXT_RUN = /[\t\n\r\x20-\x7e]{4,}/g;

/**
 * Whether a binary file's bytes (read as latin1) hold anything `redact` would cut. A key a
 * program stored (an SQLite page, a JSON text in it, escaped or not) is a run of printable
 * ASCII; so only those runs are read, joined apart, as `strings` would show them: reading
 * the whole file cost ~0.8 s per MB of random bytes, which look like escapes everywhere,
 * and blocked the server's event loop after every Codex job.
 */
export function binaryHoldsSecret(latin1: string): boolean {
  const runs = latin1.match(TEXT_RUN);
  return runs !== null && holdsSecret(runs.join("\0"));
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
