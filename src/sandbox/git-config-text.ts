/**
 * A git config file as git reads its values (config.c's parse_value): what a key's value
 * hands to `sh -c` is not the file's bytes. `nbstripout --install` stores
 * `clean = \"/usr/bin/python3\" -m nbstripout`: git strips the escapes, so the filter
 * runs `"/usr/bin/python3" -m nbstripout`; read raw, the first word was
 * `/usr/bin/python3\`, no interpreter, and the module it imports went unnamed.
 *
 * Each `key = value` line comes out as `key = <value as git parsed it>`: double quotes
 * removed (they only keep white space and `;`/`#`), `\"`, `\\`, `\t`, `\n` and `\b`
 * decoded, a trailing `\` joining the next line, and a comment (`;` or `#` outside quotes)
 * dropped. Section headers and lines without a value are kept as they are.
 */
export function gitConfigText(text: string): string {
  return joinedLines(text)
    .flatMap(withoutHeader)
    .map((line) => {
      const m = /^(\s*[A-Za-z][\w-]*\s*=)(.*)$/.exec(line);
      return m ? `${m[1]} ${parsedValue(m[2]!)}` : line;
    })
    .join("\n");
}

/** A section header and what follows it on its line (`[core] fsmonitor = x`: git reads a key there too), apart. */
function withoutHeader(line: string): string[] {
  const m = /^(\s*\[(?:[^\]"]|"(?:[^"\\]|\\.)*")*\])(.*)$/.exec(line);
  return m && m[2]!.trim() !== "" ? [m[1]!, m[2]!] : [line];
}

/**
 * The file's lines, each ending in a `\` that continues it joined with the next one, as
 * git reads them: a `\` escapes the character after it, a `;` or `#` outside quotes starts
 * a comment that runs to the line's end, and a backslash inside a comment continues nothing.
 */
function joinedLines(text: string): string[] {
  const out: string[] = [];
  let pending = "";
  for (const line of text.split(/\r?\n/)) {
    if (continues(pending + line)) {
      pending += line.slice(0, -1);
      continue;
    }
    out.push(pending + line);
    pending = "";
  }
  if (pending) out.push(pending);
  return out;
}

/** Whether a (joined) line ends in a backslash that continues it: one outside a comment, escaping the newline. */
function continues(line: string): boolean {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "\\") {
      if (i === line.length - 1) return true;
      i++;
    } else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ";" || c === "#")) return false;
  }
  return false;
}

const ESCAPES: Readonly<Record<string, string>> = { n: "\n", t: "\t", b: "", '"': '"', "\\": "\\" };

/** One value as git parses it: quotes removed, escapes decoded, a comment outside quotes dropped. */
function parsedValue(raw: string): string {
  let out = "";
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === "\\" && i + 1 < raw.length) {
      const next = raw[++i]!;
      out += ESCAPES[next] ?? next;
    } else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ";" || c === "#")) break;
    else out += c;
  }
  return out.trim();
}
