/**
 * Command-line options whose value is a password, for the programs whose option is one:
 * `mysql -pX` (attached only: `mysql -p db` prompts and names a database), `sshpass -p X`,
 * `redis-cli -a X`, `mongosh -p X`, `docker login -p X`, `curl -u user:X`, `htpasswd -b
 * file user X`. Not ssh's, scp's or psql's `-p` (a port), nor `docker run -p` (a port
 * mapping): a program's options are read only for the program that has them.
 *
 * Bounded: each word is read once (a program named again inside a command's words starts
 * its own), at most WORDS_MAX words a command. Ranges hold no quote (serialized JSON stays JSON).
 */

type Cli = {
  /** Options whose next word, or the rest of their own word (`-pX`), is the password. */
  options: readonly string[];
  /** The value only attached to the option (mysql's `-pX`). */
  attachedOnly?: boolean;
  /** A word that must come first (docker's `-p` is a password only after `login`). */
  after?: string;
  /** Options whose next word is their value (skipped), and options end at the first operand (sshpass runs it). */
  valued?: readonly string[];
  /** The value is `user:password`: the password is after the first colon (curl's `-u`). */
  userPass?: boolean;
};

const CLIS: Record<string, Cli> = {
  mysql: { options: ["-p"], attachedOnly: true },
  sshpass: { options: ["-p"], valued: ["-f", "-d", "-P"] },
  "redis-cli": { options: ["-a"] },
  mongo: { options: ["-p"] },
  login: { options: ["-p"], after: "login" },
  curl: { options: ["-u", "--user", "-U", "--proxy-user"], userPass: true },
};

/** A program whose options are read, by its name (a path before it allowed: `/usr/bin/mysql`). */
const PROGRAMS = String.raw`mysql\w{0,12}|mariadb(?:-\w{1,12})?|sshpass|redis-cli|mongo(?:sh|dump|restore|export|import|stat|top|files)?|docker|podman|buildah|skopeo|nerdctl|helm|oras|curl|htpasswd`;
const PROGRAM = new RegExp(String.raw`(?<![\w.-])(${PROGRAMS})(?![\w.-])`, "g");
const PROGRAM_WORD = new RegExp(String.raw`^(?:[\w.~-]{0,256}/){0,32}(?:${PROGRAMS})$`);

const cliOf = (program: string): Cli | null =>
  /^(?:mysql|mariadb)/.test(program)
    ? CLIS.mysql!
    : program.startsWith("mongo")
      ? CLIS.mongo!
      : /^(?:docker|podman|buildah|skopeo|nerdctl|helm|oras)$/.test(program)
        ? CLIS.login!
        : (CLIS[program] ?? null);

/** A shell word after white space: quoted parts, or characters with no quote (a backslash escaping one). */
const WORD = /[ \t]{1,64}((?:'[^'\r\n]{0,4096}'|"[^"\\\r\n]{0,4096}"|[^\s'"\\]|\\[^\s"]){1,4096})/y;
const WORDS_MAX = 64;
/** A word that ends a command: what follows is another's. */
const COMMAND_END = /^(?:[;&|]{1,2})$|;$/;

type Word = { at: number; word: string };

/** The words of the command after `at`, to its end, the end of the line, or another program's name. */
function wordsAfter(text: string, at: number): { words: Word[]; end: number } {
  const words: Word[] = [];
  WORD.lastIndex = at;
  let end = at;
  for (let m = WORD.exec(text); m && words.length < WORDS_MAX; m = WORD.exec(text)) {
    const word = m[1]!;
    if (PROGRAM_WORD.test(word) && !words.at(-1)?.word.startsWith("-")) break;
    words.push({ at: m.index + m[0].length - word.length, word });
    end = WORD.lastIndex;
    if (COMMAND_END.test(word)) break;
  }
  return { words, end };
}

/** The range of a word's value from `from` (its quotes off, a closing `;` off), or null when it holds a quote. */
function valueRange(w: Word, from: number, userPass: boolean): [number, number] | null {
  let a = w.at + from;
  let b = w.at + w.word.length;
  if (w.word[b - w.at - 1] === ";") b--;
  const q = w.word[a - w.at];
  if ((q === "'" || q === '"') && b - a >= 2 && w.word[b - w.at - 1] === q) {
    a++;
    b--;
  }
  if (userPass) {
    const colon = w.word.indexOf(":", a - w.at);
    if (colon < 0 || colon >= b - w.at) return null;
    a = w.at + colon + 1;
  }
  const value = w.word.slice(a - w.at, b - w.at);
  return value.length === 0 || /["'\r\n]/.test(value) || /^-/.test(value) ? null : [a, b];
}

/** curl's short options that take no value, which may come before `-u` in one word (`-su`, `-sSu`). */
const CURL_USER = /^-[sSvkLfiIlOJgGnNqRZ#0-9]{0,16}[uU]/;

/** The ranges of the passwords `cli`'s options give among `words`. */
function optionRanges(cli: Cli, words: readonly Word[]): [number, number][] {
  const out: [number, number][] = [];
  const start = cli.after ? words.findIndex((w) => w.word === cli.after) : 0;
  if (start < 0) return out;
  for (let i = start; i < words.length; i++) {
    const w = words[i]!.word;
    if (cli.valued && !w.startsWith("-")) break; // the command sshpass runs: its options are its own
    if (cli.valued?.includes(w)) i++;
    const curl = cli.userPass ? CURL_USER.exec(w) : null;
    const option = curl ? "-u" : cli.options.find((o) => w === o || (o.length === 2 && w.startsWith(o)));
    if (!option) continue;
    const at = curl ? curl[0].length : option.length;
    const separate = w.length === at;
    if (separate && cli.attachedOnly) continue;
    const range = separate
      ? words[i + 1]
        ? valueRange(words[i + 1]!, 0, !!cli.userPass)
        : null
      : valueRange(words[i]!, at, !!cli.userPass);
    if (separate) i++;
    if (range) out.push(range);
  }
  return out;
}

/** htpasswd's password in batch mode (`-b`): the operand after the file and the user (after the user alone with `-n`). */
function htpasswdRanges(words: readonly Word[]): [number, number][] {
  let flags = "";
  let i = 0;
  for (; i < words.length && /^-[A-Za-z]{1,8}$/.test(words[i]!.word); i++) {
    flags += words[i]!.word.slice(1);
    if (/[Cr]$/.test(words[i]!.word)) i++; // bcrypt's cost, a hash's rounds
  }
  const password = words[i + (flags.includes("n") ? 1 : 2)];
  if (!flags.includes("b") || !password) return [];
  const range = valueRange(password, 0, false);
  return range ? [range] : [];
}

/** Where command lines in `text` give a password to a program's option (see the header). */
export function cliRanges(text: string): [number, number][] {
  const out: [number, number][] = [];
  PROGRAM.lastIndex = 0;
  for (let m = PROGRAM.exec(text); m; m = PROGRAM.exec(text)) {
    const { words, end } = wordsAfter(text, PROGRAM.lastIndex);
    const cli = cliOf(m[1]!);
    out.push(...(m[1] === "htpasswd" ? htpasswdRanges(words) : cli ? optionRanges(cli, words) : []));
    PROGRAM.lastIndex = Math.max(end, PROGRAM.lastIndex);
  }
  return out;
}
