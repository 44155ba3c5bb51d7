/**
 * The credential grammars of real files and command lines beyond `name = value` and
 * `--name value` (redact.ts reads those): where each says a credential's value starts.
 * redact.ts cuts and learns what they find, as it does a named value.
 *
 * Every pattern is bounded (each quantifier, each scan) and finds only where a value
 * starts or the range of a value holding no quote or backslash, so serialized JSON stays JSON.
 */

/**
 * A form whose match ends where a value starts: group `n` (or `s`) is the name the value is
 * under (none: the form's own word says password), group `q` the quote that opened the value.
 * `element`: the value runs to the element's end (`<`); `oneWord`: a value with a space is
 * prose, not a credential (a translation file's `"Forgot password": "Mot de passe ?"`).
 */
export type NamedForm = { re: RegExp; element?: boolean; oneWord?: boolean };

const NAME = String.raw`[A-Za-z_][\w.:-]{0,127}`;
/** A CDATA section's opening, group `c`: the element's text is inside it. */
const CDATA = String.raw`(?<c><!\[CDATA\[)?`;

export const NAMED_FORMS: readonly NamedForm[] = [
  // PHP's define('DB_PASSWORD', 'v') (wp-config.php).
  {
    re: new RegExp(
      String.raw`\bdefine[ \t]{0,8}\([ \t]{0,8}\\?(["'])(?<n>${NAME})\\?\1[ \t]{0,8},[ \t]{0,8}\\?(?<q>["']?)`,
      "g",
    ),
  },
  // PHP's and Ruby's hash arrows: 'password' => 'v', :password => "v".
  {
    re: new RegExp(
      String.raw`(?:\\?(["'])(?<n>${NAME})\\?\1|(?<![\w:]):(?<s>[A-Za-z_]\w{0,127}))[ \t]{0,8}=>[ \t]{0,8}\\?(?<q>["']?)`,
      "g",
    ),
  },
  // An XML or HTML element named as a credential: <password>v</password>, <ApiKey>v</ApiKey>,
  // its text in a CDATA section too: <password><![CDATA[v]]></password> (the value ends at `]]>`).
  { re: new RegExp(String.raw`<(?<n>${NAME})(?:[ \t][^<>]{0,256})?>[ \t]{0,64}${CDATA}`, "g"), element: true },
  // A key or name attribute naming a credential, its value in `value`: <add key="ApiKey" value="v"/>.
  {
    re: new RegExp(
      String.raw`\b(?:key|name)[ \t]{0,8}=[ \t]{0,8}\\?(["'])(?<n>${NAME})\\?\1[^<>]{0,256}?\bvalue[ \t]{0,8}=[ \t]{0,8}\\?(?<q>["'])`,
      "gi",
    ),
  },
  // A name/value pair: Kubernetes' `- name: DB_PASSWORD` then `value: v`, an ECS or Postman
  // `{"name": "API_TOKEN", "value": "v"}` (`key` for `name` too).
  {
    re: new RegExp(
      String.raw`\b(?:name|key)\\?["']?[ \t]{0,8}:[ \t]{0,8}\\?(["']?)(?<n>${NAME})\\?\1[ \t]{0,8},?[ \t]{0,8}(?:\r?\n[ \t]{0,64})?(?:-[ \t]{1,8})?\\?["']?value\\?["']?[ \t]{0,8}:[ \t]{0,8}\\?(?<q>["']?)`,
      "gi",
    ),
  },
  // A quoted key with spaces: "API Key": "v", 'Secret Access Key': 'v'.
  {
    re: /(?<![\w\\])\\?(["'])(?<n>[A-Za-z_][\w.-]{0,63}(?: [\w.-]{1,63}){1,4})\\?\1[ \t]{0,8}:[ \t]{0,8}\\?(?<q>["'])/g,
    oneWord: true,
  },
  // AWS SSM's parameter: a Value beside a Name whose last path segment says credential
  // (`"Name": "/prod/db/password"`, other keys between), or beside `"Type": "SecureString"`.
  {
    re: /\\?"Name\\?"[ \t]{0,8}:[ \t]{0,8}\\?"(?:[^"\\/\r\n]{0,128}\/){0,16}(?<n>[A-Za-z_][\w.-]{0,127})\\?"[^{}]{0,512}?\\?"Value\\?"[ \t]{0,8}:[ \t]{0,8}\\?(?<q>")/g,
  },
  {
    re: /\\?"Type\\?"[ \t]{0,8}:[ \t]{0,8}\\?"SecureString\\?"[^{}]{0,512}?\\?"Value\\?"[ \t]{0,8}:[ \t]{0,8}\\?(?<q>")/g,
  },
  // A Google service account's `"private_key_id": "…"` (the key's id: named, not shaped).
  { re: /\\?"private_key_id\\?"[ \t]{0,8}:[ \t]{0,8}\\?(?<q>")/g },
  // A Dockerfile's `ENV NAME value` (the old, space-separated form).
  { re: new RegExp(String.raw`^[ \t]{0,64}ENV[ \t]{1,8}(?<n>${NAME})[ \t]{1,8}(?<q>["']?)`, "gm") },
  // `vault login TOKEN` (not `-method=…` nor `name=value`), PowerShell's `ConvertTo-SecureString "P"`,
  // `aws configure set aws_secret_access_key P` (the name decides).
  { re: /\bvault[ \t]{1,8}login[ \t]{1,8}(?![-\w.]{0,128}=|-)(?<q>["']?)/g },
  { re: /\bConvertTo-SecureString[ \t]{1,8}(?:-String[ \t]{1,8})?(?<q>["']?)(?!-)/gi },
  { re: new RegExp(String.raw`\bconfigure[ \t]{1,8}set[ \t]{1,8}(?<n>${NAME})[ \t]{1,8}(?<q>["']?)`, "g") },
  // .netrc: `machine h login u password v`, on one line or over several (`default` for any host).
  {
    re: /\b(?:machine[ \t\r\n]{1,64}[^\s"'\\]{1,253}|default)(?:[ \t\r\n]{1,64}(?:login|account|port)[ \t\r\n]{1,64}[^\s"'\\]{1,256}){0,3}[ \t\r\n]{1,64}password[ \t]{1,8}/g,
  },
  // A .pgpass line, `host:port:database:user:password`: a host name, an IP or `*`, then a port
  // (or `*`), the password the line's last field. Only a whole line of this shape: not a time.
  {
    re: /^(?:\*|[A-Za-z][\w.-]{0,252}|(?:\d{1,3}\.){3}\d{1,3}):(?:\d{1,5}|\*):[^:\s"'\\]{1,128}:[^:\s"'\\]{1,128}:(?=[^:\s"'\\]{1,4096}$)/gm,
  },
];

/** A base64 text that starts `-----BEGIN ` (kubeconfig's `client-key-data`, a Kubernetes secret's `tls.key`). */
const PEM_BASE64 = /\bLS0tLS1CRUdJTi[A-Za-z0-9+/]{20,16384}={0,2}/g;
const PRIVATE_PEM = /^-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----/;

/** Where base64 of a PEM private key is in `text` (a certificate's, public, is not). */
export function pemBase64Ranges(text: string): [number, number][] {
  const out: [number, number][] = [];
  if (!text.includes("LS0tLS1CRUdJTi")) return out;
  for (const m of text.matchAll(PEM_BASE64))
    if (PRIVATE_PEM.test(Buffer.from(m[0].slice(0, 80), "base64").toString("latin1")))
      out.push([m.index, m.index + m[0].length]);
  return out;
}
