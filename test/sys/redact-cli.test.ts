import { describe, expect, test } from "bun:test";
import { REDACTED, redact } from "../../src/sys/redact.ts";

/** `text` redacted holds none of `secret`, and `secret` said again bare, later, is cut too (it was learned). */
function cutAndLearned(text: string, secret: string): void {
  const out = redact(text);
  expect({ text, out }).toEqual({ text, out: expect.not.stringContaining(secret) });
  expect(out).toContain(REDACTED);
  expect(redact(`later: ${secret} again`)).toBe(`later: ${REDACTED} again`);
}

/** `text` redacted holds none of `secret` (a shape: cut where it is, not learned). */
function cut(text: string, secret: string): void {
  const out = redact(text);
  expect({ text, out }).toEqual({ text, out: expect.not.stringContaining(secret) });
}

/** `text` redacted is `text`: nothing in it is a credential. */
const untouched = (text: string) => expect(redact(text)).toBe(text);

describe("redact: password options by their spelling", () => {
  test("-w (ldap), -P (sqlcmd, zip), -pX (7z), -k (openssl enc), -N (ssh-keygen), -u user,pw (lftp), -p (useradd, az login)", () => {
    cutAndLearned("ldapsearch -x -D cn=admin,dc=ex -w Ldw1-cliA9 -b dc=ex", "Ldw1-cliA9");
    cutAndLearned("ldapsearch -x -wLdw2-cliB8", "Ldw2-cliB8");
    cutAndLearned('sqlcmd -S srv -U sa -P Sqc3-cliC7 -Q "select 1"', "Sqc3-cliC7");
    cutAndLearned("sqlcmd -S srv -U sa -PSqc4-cliD6", "Sqc4-cliD6");
    cutAndLearned("zip -P Zpp5-cliE5 out.zip f", "Zpp5-cliE5");
    cutAndLearned("unzip -P Zpp6-cliF4 out.zip", "Zpp6-cliF4");
    cutAndLearned("7z a -pSvz7-cliG3 out.7z dir", "Svz7-cliG3");
    cutAndLearned("openssl enc -aes-256-cbc -k Osk8-cliH2 -in f", "Osk8-cliH2");
    cutAndLearned("ssh-keygen -t ed25519 -N Skg9-cliI1 -f k", "Skg9-cliI1");
    cutAndLearned("lftp -u bob,Lft10-cliJ0 ftp.example.com", "Lft10-cliJ0");
    cutAndLearned("useradd -p Uad11-cliK9 bob", "Uad11-cliK9");
    cutAndLearned("az login -u bob@x.com -p Azl12-cliL8", "Azl12-cliL8");
    cutAndLearned("az login -u bob -p 'Azl13-cliM7'", "Azl13-cliM7");
  });

  test("single-dash pass options after any program, Samba's user%password, curl --user=", () => {
    cutAndLearned("keytool -list -keystore k.jks -storepass Kts14-cliN6", "Kts14-cliN6");
    cutAndLearned("keytool -genkey -keypass Ktk15-cliO5 -alias x", "Ktk15-cliO5");
    cutAndLearned("New-LocalUser bob -Password Psw16-cliP4", "Psw16-cliP4");
    cutAndLearned("openssl enc -aes-256-cbc -pass pass:Osp17-cliQ3", "Osp17-cliQ3");
    cutAndLearned("smbclient //srv/share -U bob%Smb18-cliR2", "Smb18-cliR2");
    cutAndLearned("smbclient //srv/share --user=bob%Smb19-cliS1", "Smb19-cliS1");
    cutAndLearned(JSON.stringify({ cmd: "rpcclient -U bob%Smb20-cliT0 h" }), "Smb20-cliT0");
    cutAndLearned("curl --user=bob:Cur21-cliU9 https://x", "Cur21-cliU9");
  });

  test("a continued command line, many words before the option, a value starting with a dash", () => {
    cutAndLearned("curl -X POST \\\n  -u bob:Cml22-cliV8 \\\n  https://api.example.com", "Cml22-cliV8");
    cutAndLearned("mysql -h db \\\n  -uroot -pMml23-cliW7 app", "Mml23-cliW7");
    cutAndLearned("mysql -uroot -p-Mdl24-cliX6", "-Mdl24-cliX6");
    const headers = Array.from({ length: 80 }, (_, i) => `-H 'X-H${i}: v'`).join(" ");
    cutAndLearned(`curl ${headers} -u bob:Chd25-cliY5 https://x`, "Chd25-cliY5");
  });

  test("vault login TOKEN, aws configure set, PowerShell's ConvertTo-SecureString", () => {
    cutAndLearned("vault login Vlt26-cliZ4", "Vlt26-cliZ4");
    cutAndLearned("aws configure set aws_secret_access_key Acs27-cliA3", "Acs27-cliA3");
    cutAndLearned('ConvertTo-SecureString "Pss28-cliB2" -AsPlainText -Force', "Pss28-cliB2");
  });

  test("ordinary flags stay: curl -k, grep -w and -P, xargs -P, ssh -N and -p, docker run -p, prose", () => {
    untouched("curl -k https://example.com/x -o out-1.json");
    untouched("grep -w foo1 file && grep -P 'a.b2' f && xargs -P 4 -n1 echo");
    untouched("ssh -N -p 2222 -L 8080:localhost:80 bob@host-1");
    untouched("docker run -p 8080:80 -e X=1 nginx:1.25 && psql -p 5432 -U bob app_db");
    untouched("use the -password option, or -bypass x-1, or -askpass /usr/bin/ssh-askpass");
    untouched("vault login -method=userpass username=bob");
    untouched("ps -U root -u daemon1 && zipinfo -1 out.zip && openssl x509 -in cert-1.pem -noout");
    untouched("7z a -p out-2.7z dir-3");
  });
});

describe("redact: variables and keys", () => {
  test("SSHPASS, SecretString, Dockerfile's ENV NAME value", () => {
    cutAndLearned("SSHPASS=Shp29-cliC1 sshpass -e ssh bob@h", "Shp29-cliC1");
    cutAndLearned('declare -x SSHPASS="Shp30-cliD0"', "Shp30-cliD0");
    cutAndLearned('{\n  "Name": "prod/db",\n  "SecretString": "Sst31-cliE9",\n  "VersionId": "a"\n}', "Sst31-cliE9");
    cutAndLearned("ENV DB_PASSWORD Dkf32-cliF8", "Dkf32-cliF8");
    untouched("ENV PATH /usr/local/bin:/usr/bin\nENV NODE_ENV production-1");
  });

  test("AWS SSM's Value beside a credential's Name or SecureString; XML CDATA; private_key_id", () => {
    const ssm = (name: string, type: string, v: string) =>
      `{\n    "Parameter": {\n        "Name": "${name}",\n        "Type": "${type}",\n        "Value": "${v}",\n        "Version": 1\n    }\n}`;
    cutAndLearned(ssm("/prod/db/password", "String", "Ssm33-cliG7"), "Ssm33-cliG7");
    cutAndLearned(ssm("/prod/db/conn", "SecureString", "Ssm34-cliH6"), "Ssm34-cliH6");
    cutAndLearned(JSON.stringify({ out: ssm("/prod/api_token", "String", "Ssm35-cliI5") }), "Ssm35-cliI5");
    untouched(ssm("/prod/db/host", "String", "db-1.internal"));
    cutAndLearned("<password><![CDATA[Cdt36-cliJ4]]></password>", "Cdt36-cliJ4");
    cutAndLearned(
      '{\n  "type": "service_account",\n  "private_key_id": "3f2a1b4c5d6e7f8091a2b3c4d5e6f7a8b9c0cli37"\n}',
      "3f2a1b4c5d6e7f8091a2b3c4d5e6f7a8b9c0cli37",
    );
  });

  test("a URL's password holding /, # or ?; a port and a path with @ stay", () => {
    cutAndLearned("postgres://bob:Url38/cliK3@h/db", "Url38/cliK3");
    cutAndLearned("postgres://bob:Url39#cliL2@h/db", "Url39#cliL2");
    cutAndLearned("https://bob:Url40?cliM1@h/", "Url40?cliM1");
    untouched("http://localhost:3000/@vite/client https://registry.npmjs.org/@scope/pkg https://h:8443/a/@b");
  });
});

describe("redact: vendor token shapes", () => {
  test("Stripe whsec_, Slack xapp-/xoxe-, GitLab glrt-/gldt-, PyPI, Docker, Atlassian, Postman, Doppler", () => {
    cut("Ready! Your webhook signing secret is whsec_Wh41cliN0abcdef (^C to quit)", "Wh41cliN0");
    cut("xapp-1-A0123-4567-Xap42cliO9z", "Xap42cliO9");
    cut("xoxe-1-Xoe43cliP8zzzz", "Xoe43cliP8");
    cut("glrt-Glr44cliQ7abcdefghij", "Glr44cliQ7");
    cut("gldt-Gld45cliR6abcdefghij", "Gld45cliR6");
    cut("glpat-Glp46cliS5abcdefghij", "Glp46cliS5");
    cut("pypi-AgEIcHlwaS5vcmcPyp47cliT4", "Pyp47cliT4");
    cut("dckr_pat_Dkp48cliU3abcdef", "Dkp48cliU3");
    cut("ATATT3xFfGF0Atl49cliV2", "Atl49cliV2");
    cut("PMAK-Pmk50cliW1-abcdef0123", "Pmk50cliW1");
    cut("dp.st.prd.Dpl51cliX0abcdef", "Dpl51cliX0");
    untouched("dp.st.prd is a label; PMAK-1 and whsec_ alone; gldt-x");
  });
});
