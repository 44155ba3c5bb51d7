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
  /** What separates the user from the password when not a colon (lftp's `-u user,password`). */
  userSep?: string;
};

const CLIS: Record<string, Cli> = {
  mysql: { options: ["-p"], attachedOnly: true },
  sshpass: { options: ["-p"], valued: ["-f", "-d", "-P"] },
  "redis-cli": { options: ["-a"] },
  mongo: { options: ["-p"] },
  login: { options: ["-p"], after: "login" },
  curl: { options: ["-u", "--user", "-U", "--proxy-user"], userPass: true },
  /** ldapsearch's and its kin's `-w` (bind password; `-W` prompts). */
  ldap: { options: ["-w"] },
  /** sqlcmd's and bcp's `-P`, zip's and unzip's `-P`. */
  sqlcmd: { options: ["-P"] },
  /** 7-Zip's `-pX` (attached only: `-p` alone prompts). */
  "7z": { options: ["-p"], attachedOnly: true },
  /** openssl enc's `-k` (a password; curl's `-k` is --insecure and is not read). */
  openssl: { options: ["-k"] },
  /** ssh-keygen's `-N` (new passphrase) and `-P` (old). */
  "ssh-keygen": { options: ["-N", "-P"] },
  /** lftp's `-u user,password`. */
  lftp: { options: ["-u"], userPass: true, userSep: "," },
  /** useradd's and usermod's `-p` (a crypt hash: a password's equivalent). */
  useradd: { options: ["-p"] },
};

/** A program whose options are read, by its name (a path before it allowed: `/usr/bin/mysql`). */
const PROGRAMS = String.raw`mysql\w{0,12}|mariadb(?:-\w{1,12})?|sshpass|redis-cli|mongo(?:sh|dump|restore|export|import|stat|top|files)?|docker|podman|buildah|skopeo|nerdctl|helm|oras|az|curl|htpasswd|ldap[a-z]{2,12}|sqlcmd|bcp|zip|unzip|zipcloak|7z[ar]?|openssl|ssh-keygen|lftp|useradd|usermod`;
const PROGRAM = new RegExp(String.raw`(?<![\w.-])(${PROGRAMS})(?![\w.-])`, "g");
const PROGRAM_WORD = new RegExp(String.raw`^(?:[\w.~-]{0,256}/){0,32}(?:${PROGRAMS})$`);

/** A program's family: the options its members share. */
const FAMILIES: readonly [RegExp, Cli][] = [
  [/^(?:mysql|mariadb)/, CLIS.mysql!],
  [/^mongo/, CLIS.mongo!],
  [/^(?:docker|podman|buildah|skopeo|nerdctl|helm|oras|az)$/, CLIS.login!],
  [/^ldap/, CLIS.ldap!],
  [/^(?:sqlcmd|bcp|zip|unzip|zipcloak)$/, CLIS.sqlcmd!],
  [/^7z/, CLIS["7z"]!],
  [/^user(?:add|mod)$/, CLIS.useradd!],
];

const cliOf = (program: string): Cli | null => FAMILIES.find(([re]) => re.test(program))?.[1] ?? CLIS[program] ?? null;

/** A shell word after white space: quoted parts, or characters with no quote (a backslash escaping one). */
const WORD = /(?:[ \t]|\\\r?\n){1,64}((?:'[^'\r\n]{0,4096}'|"[^"\\\r\n]{0,4096}"|[^\s'"\\]|\\[^\s"]){1,4096})/y;
const WORDS_MAX = 1024;
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

/**
 * The range of a word's value from `from` (its quotes off, a closing `;` off), or null when it
 * holds a quote; with `userSep`, the part after the first `userSep` (`user:password`). A word of
 * its own starting with `-` is the next option; attached to its option (`mysql -p-Xy`) it is a value.
 */
function valueRange(w: Word, from: number, userSep: string | null): [number, number] | null {
  let a = w.at + from;
  let b = w.at + w.word.length;
  if (w.word[b - w.at - 1] === ";") b--;
  const q = w.word[a - w.at];
  if ((q === "'" || q === '"') && b - a >= 2 && w.word[b - w.at - 1] === q) {
    a++;
    b--;
  }
  if (userSep) {
    const colon = w.word.indexOf(userSep, a - w.at);
    if (colon < 0 || colon >= b - w.at) return null;
    a = w.at + colon + 1;
  }
  const value = w.word.slice(a - w.at, b - w.at);
  return value.length === 0 || /["'\r\n]/.test(value) || (from === 0 && /^-/.test(value)) ? null : [a, b];
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
    const option = curl ? "-u" : cli.options.find((o) => w === o || w.startsWith(o.length === 2 ? o : `${o}=`));
    if (!option) continue;
    const at = curl ? curl[0].length : option.length + (option.length > 2 && w.length > option.length ? 1 : 0);
    const separate = w.length === at;
    if (separate && cli.attachedOnly) continue;
    const sep = cli.userPass ? (cli.userSep ?? ":") : null;
    const range = separate ? (words[i + 1] ? valueRange(words[i + 1]!, 0, sep) : null) : valueRange(words[i]!, at, sep);
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
  const range = valueRange(password, 0, null);
  return range ? [range] : [];
}

/**
 * Options whose value is a password after any program, by their spelling: a single dash and a
 * word ending in pass (keytool's `-storepass`, `-keypass`; PowerShell's `-Password`; openssl's
 * `-pass pass:X`; not `-bypass`, `-nopass`, `-askpass`), its value after a blank or `=`; Samba's
 * `-U user%password` (smbclient, rpcclient, smbmap), `--user=user%password`. The match ends
 * where the value starts. `--password value` is redact.ts's (a name's last word).
 */
const ANY_PROGRAM: readonly RegExp[] = [
  /(?<![\w-])-(?!(?:by|no|ask|com)pass)[A-Za-z]{0,24}pass(?:word|wd|phrase)?(?:[ \t]{1,8}|=)(?:pass:)?(?=[^\s-])/gi,
  /(?<![\w-])(?:-U[ \t]{0,8}|--user(?:name)?(?:[ \t]{1,8}|=))[^\s%"'\\]{1,256}%(?=\S)/g,
];
/** A value after such an option: quoted, or to white space or a shell's `;`, `|`, `&`. */
const ANY_VALUE = /(?:'[^'\r\n]{0,4096}'|"[^"\\\r\n]{0,4096}"|[^\s'"\\;|&]){1,4096}/y;
/** A password has a digit or a symbol: prose's "-password option" is not cut. */
const PASSWORD_LIKE = /[0-9_./+=~!@#$%^&*?-]/;

/** The ranges of the values of ANY_PROGRAM's options in `text`. */
function anyProgramRanges(text: string): [number, number][] {
  const out: [number, number][] = [];
  for (const re of ANY_PROGRAM)
    for (const m of text.matchAll(re)) {
      ANY_VALUE.lastIndex = m.index + m[0].length;
      const v = ANY_VALUE.exec(text);
      const range = v ? valueRange({ at: v.index, word: v[0] }, 0, null) : null;
      if (range && PASSWORD_LIKE.test(text.slice(range[0], range[1]))) out.push(range);
    }
  return out;
}

/** Where command lines in `text` give a password to a program's option (see the header). */
export function cliRanges(text: string): [number, number][] {
  const out: [number, number][] = anyProgramRanges(text);
  PROGRAM.lastIndex = 0;
  for (let m = PROGRAM.exec(text); m; m = PROGRAM.exec(text)) {
    const { words, end } = wordsAfter(text, PROGRAM.lastIndex);
    const cli = cliOf(m[1]!);
    out.push(...(m[1] === "htpasswd" ? htpasswdRanges(words) : cli ? optionRanges(cli, words) : []));
    PROGRAM.lastIndex = Math.max(end, PROGRAM.lastIndex);
  }
  return out;
}
