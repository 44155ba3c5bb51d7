import { describe, expect, test } from "bun:test";
import { REDACTED, redact } from "../../src/sys/redact.ts";

/** `text` redacted holds none of `secret`, and `secret` said again bare, later, is cut too (it was learned). */
function cutAndLearned(text: string, secret: string): void {
  const out = redact(text);
  expect({ text, out }).toEqual({ text, out: expect.not.stringContaining(secret) });
  expect(out).toContain(REDACTED);
  expect(redact(`later: ${secret} again`)).toBe(`later: ${REDACTED} again`);
}

/** `text` redacted is `text`: nothing in it is a credential. */
const untouched = (text: string) => expect(redact(text)).toBe(text);

describe("redact: credential grammars of real files", () => {
  test("PHP's define() and hash arrows, Ruby's hash rocket", () => {
    cutAndLearned("define( 'DB_PASSWORD', 'Wp9kLmQ-frm1' );", "Wp9kLmQ-frm1");
    cutAndLearned(`define("AUTH_KEY", "Ak7#frm2zz");`, "Ak7#frm2zz");
    cutAndLearned("'password' => 'Php4rr0w-frm3',", "Php4rr0w-frm3");
    cutAndLearned(':password => "Rb4rr0w-frm4"', "Rb4rr0w-frm4");
    untouched("define('WP_DEBUG', 'x1-true'); 'name' => 'shop-2024',");
  });

  test("XML and HTML: an element named as a credential, a key/name attribute with its value beside it", () => {
    cutAndLearned("<password>Xml3lem-frm5</password>", "Xml3lem-frm5");
    cutAndLearned('<ApiKey type="s">  Xml4pi-frm6</ApiKey>', "Xml4pi-frm6");
    cutAndLearned('<add key="ApiKey" value="Xml5ttr-frm7"/>', "Xml5ttr-frm7");
    cutAndLearned('<param name="db.password" value="Xml6ttr-frm8">', "Xml6ttr-frm8");
    untouched('<title>Password 2</title> <add key="Timeout" value="30s-x9"/>');
  });

  test("Kubernetes' and compose's name/value pairs, in YAML and JSON", () => {
    cutAndLearned("- name: DB_PASSWORD\n  value: K8sv4lue-frm9", "K8sv4lue-frm9");
    cutAndLearned('env:\n  - name: API_TOKEN\n    value: "K8sq-frm10!"', "K8sq-frm10!");
    cutAndLearned('[{"name": "DB_PASSWORD", "value": "Ecs7v-frm11"}]', "Ecs7v-frm11");
    cutAndLearned('{"key":"api_key","value":"Pst9m-frm12"}', "Pst9m-frm12");
    untouched("- name: DB_HOST\n  value: db-1.internal");
  });

  test("a quoted key with spaces; a translation's prose under such a key stays", () => {
    cutAndLearned('"API Key": "Sp4ced-frm13"', "Sp4ced-frm13");
    cutAndLearned("'Secret Access Key': 'Sp5ced/frm14'", "Sp5ced/frm14");
    untouched(`{"Forgot password": "Mot de passe oublié ?", "Your API Key": "Voir Réglages, onglet 2"}`);
  });

  test(".netrc, on one line and over several", () => {
    cutAndLearned("machine api.example.com login bob password N3trc-frm15", "N3trc-frm15");
    cutAndLearned("machine h.example.org\n  login bob\n  password N3trc-frm16\n", "N3trc-frm16");
    cutAndLearned("default login anon password N3trc-frm17", "N3trc-frm17");
  });

  test("a .pgpass line, and colon text that is no such line stays", () => {
    cutAndLearned("db.example.com:5432:app:bob:Pgp4ss-frm18", "Pgp4ss-frm18");
    cutAndLearned("*:*:*:postgres:Pgp5ss-frm19\n", "Pgp5ss-frm19");
    untouched("12:30:45:678:9012\n2024-01-01T10:00:00Z a:b:c:d:e\nsrc/a.ts:12:5: error: x1");
  });
});

describe("redact: command-line options whose value is a password", () => {
  test("mysql's attached -p, sshpass, redis-cli, mongo, docker login, curl -u, htpasswd -b", () => {
    cutAndLearned("mysql -uroot -pMy5ql-frm20 -e 'select 1'", "My5ql-frm20");
    cutAndLearned("/usr/bin/mysqldump -p'My6ql#frm21' db", "My6ql#frm21");
    cutAndLearned("sshpass -p Sshp4ss-frm22 ssh host", "Sshp4ss-frm22");
    cutAndLearned("redis-cli -h r -a R3dis-frm23 ping", "R3dis-frm23");
    cutAndLearned("mongosh mongodb://h/db -u bob -p M0ngo-frm24", "M0ngo-frm24");
    cutAndLearned("docker login -u bob -p D0cker-frm25 registry.example.com", "D0cker-frm25");
    cutAndLearned("curl -su bob:Cu7l-frm26 https://x", "Cu7l-frm26");
    cutAndLearned("curl --user 'bob:Cu8l-frm27' https://x", "Cu8l-frm27");
    cutAndLearned("htpasswd -b .htpasswd bob Htp4ss-frm28", "Htp4ss-frm28");
    cutAndLearned("htpasswd -nbB bob Htp5ss-frm29", "Htp5ss-frm29");
  });

  test("a port, a port mapping, a user id or a database is no password: other programs' -p and -u stay", () => {
    untouched("ssh -p 2222 host; scp -P 2222 a b; psql -h db -p 5432 app");
    untouched("docker run -p 8080:80 -u 1000:1000 img; docker exec -u 1000:1000 c sh");
    untouched("mysql -u root -p app_db");
    expect(redact("sshpass -p Sshp6ss-frm30 ssh -p 2222 host")).toBe(`sshpass -p ${REDACTED} ssh -p 2222 host`);
  });
});

describe("redact: base64 of a PEM private key", () => {
  test("kubeconfig's client-key-data goes whole; a certificate's base64 stays", () => {
    const b64 = (pem: string) => Buffer.from(pem).toString("base64");
    const key = b64("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7vXk\n-----END RSA PRIVATE KEY-----\n");
    const cert = b64("-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----\n");
    expect(redact(`    client-key-data: ${key}`)).toBe(`    client-key-data: ${REDACTED}`);
    untouched(`    certificate-authority-data: ${cert}`);
  });
});

describe("redact: escapes inside a value", () => {
  test("a named value holding escapes is cut whole and learned as read", () => {
    cutAndLearned('"password": "pw\\u0026Esc-frm31"', "pw&Esc-frm31");
    cutAndLearned('"SecretAccessKey": "wJalr\\/Esc-frm32"', "wJalr/Esc-frm32");
    cutAndLearned('"POSTGRES_PASSWORD=ab\\u0026Esc-frm33",', "ab&Esc-frm33");
    cutAndLearned('declare -x API_TOKEN="Sk9\\$tail\\$Esc-frm34"', "Sk9$tail$Esc-frm34");
    expect(JSON.parse(redact('{"password": "ab\\"cd\\\\Esc-frm35"}'))).toEqual({ password: REDACTED });
  });

  test("a value learned as written is cut where JSON, a shell or HTML escapes it, whole", () => {
    redact("PGPASSWORD=Kv7pQzwx&3Esc-frm36!");
    for (const w of [
      "Kv7pQzwx\\u00263Esc-frm36!",
      "Kv7pQzwx\\&3Esc-frm36\\!",
      "Kv7pQzwx&amp;3Esc-frm36!",
      "Kv7pQzwx\\x263Esc-frm36!",
    ])
      expect(redact(`env: ${w} end`)).toBe(`env: ${REDACTED} end`);
  });
});
