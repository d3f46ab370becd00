/**
 * A real CNCF distribution registry (Debian's `docker-registry`) for tests, on 127.0.0.1 with a free
 * port and a temporary storage directory; optionally behind htpasswd (bcrypt) or token auth with a
 * real token server that signs JWTs with a test certificate the registry trusts.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createSign, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import bcrypt from 'bcryptjs';
import forge from 'node-forge';

export const REGISTRY_BIN = '/usr/bin/docker-registry';
export const haveRegistry = existsSync(REGISTRY_BIN);
export const USER = { username: 'alice', password: 'correct horse battery staple' };

export interface RunningRegistry {
  host: string;
  dir: string;
  requests: string[];
  stop(): Promise<void>;
}

type Auth = 'none' | 'htpasswd' | 'token';

export async function startRegistry(auth: Auth = 'none'): Promise<RunningRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'oci-registry-'));
  let tokenServer: Server | undefined;
  let authYaml = '';
  if (auth === 'htpasswd') {
    writeFileSync(join(dir, 'htpasswd'), `${USER.username}:${bcrypt.hashSync(USER.password, 8)}\n`);
    authYaml = `auth:\n  htpasswd:\n    realm: test-realm\n    path: ${join(dir, 'htpasswd')}\n`;
  } else if (auth === 'token') {
    const issuer = makeIssuer();
    writeFileSync(join(dir, 'token-ca.pem'), issuer.certPem);
    tokenServer = await startTokenServer(issuer);
    const port = (tokenServer.address() as { port: number }).port;
    authYaml = `auth:\n  token:\n    realm: http://127.0.0.1:${port}/token\n    service: test-registry\n    issuer: test-issuer\n    rootcertbundle: ${join(dir, 'token-ca.pem')}\n`;
  }
  const config = `version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: false\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'data')}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:0\n  secret: test-secret\n${authYaml}`;
  writeFileSync(join(dir, 'config.yml'), config);
  const child = spawn(REGISTRY_BIN, ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  const requests: string[] = [];
  const host = await new Promise<string>((resolve, reject) => {
    let log = '';
    const onData = (d: Buffer) => {
      log += d.toString();
      for (const m of d.toString().matchAll(/"(GET|HEAD|POST|PUT|PATCH|DELETE) ([^ ]+) HTTP/g)) requests.push(`${m[1]} ${m[2]}`);
      const listening = /listening on (127\.0\.0\.1:\d+)/.exec(log);
      if (listening) resolve(listening[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`docker-registry exited ${code}: ${log.slice(-2000)}`)));
  });
  return {
    host, dir, requests,
    async stop() {
      await stopChild(child);
      await new Promise((r) => (tokenServer ? tokenServer.close(r) : r(null)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

interface Issuer {
  certPem: string;
  certDer: string;
  keyPem: string;
}

function makeIssuer(): Issuer {
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const subject = [{ name: 'commonName', value: 'test token issuer' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([{ name: 'basicConstraints', cA: true }, { name: 'keyUsage', keyCertSign: true, digitalSignature: true }]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  const der = forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes();
  return { certPem: forge.pki.certificateToPem(cert), certDer: forge.util.encode64(der), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** Issues the requested actions to alice (Basic auth); anonymous callers get pull only on `public/…`. */
function startTokenServer(issuer: Issuer): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const auth = req.headers.authorization;
    let user = '';
    if (auth?.startsWith('Basic ')) {
      const [name, ...rest] = Buffer.from(auth.slice(6), 'base64').toString().split(':');
      if (name !== USER.username || rest.join(':') !== USER.password) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"details":"invalid credentials"}');
        return;
      }
      user = name;
    }
    const access = url.searchParams.getAll('scope').flatMap((scope) => {
      const [type, name, actions] = scope.split(':');
      const wanted = (actions ?? '').split(',');
      const granted = user ? wanted : name?.startsWith('public/') ? wanted.filter((a) => a === 'pull') : [];
      return type === 'repository' && granted.length > 0 ? [{ type, name, actions: granted }] : [];
    });
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: 'RS256', typ: 'JWT', x5c: [issuer.certDer] };
    const claims = { iss: 'test-issuer', sub: user, aud: url.searchParams.get('service'), exp: now + 300, nbf: now - 10, iat: now, jti: randomUUID(), access };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    const signature = createSign('RSA-SHA256').update(input).sign(issuer.keyPem);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: `${input}.${b64url(signature)}`, expires_in: 300 }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export const run = promisify(execFile);

/** skopeo with a policy that accepts anything (the machine's policy.json is not the test's business). */
export async function skopeo(args: string[]): Promise<string> {
  const { stdout } = await run('skopeo', ['--insecure-policy', ...args], { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}
