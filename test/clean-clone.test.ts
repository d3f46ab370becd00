/**
 * Every command block of the root README, in order, exactly as written, on a fresh copy of the
 * repository (the files git tracks, as the working tree has them: no node_modules, nothing built);
 * then every block of each template's README in the project made from it (the http one in
 * ../my-function, the cloudevents one in ../greeter), with the local cluster still up.
 * A block the test leaves out carries `<!-- clean-clone: not run: <why> -->` right above it; any
 * other block must match one of the steps below, so a new README block cannot go untested.
 *
 * Added to what a reader types: PORT (a free port instead of 8080) for what serves, and
 * CLUSTER_API_PORT=0 and pod and Service address blocks of its own for the local cluster (other
 * clusters on the machine, tests of other packages, use the default ones); the blocks after the deploy one run with the KUBECONFIG
 * that block exports (the reader's second terminal). The order is the README's: install → serve
 * hello → create (install, test, start) → dev → invoke → the local cluster → deploy (and a redeploy
 * after an edit) → invoke by name → list, logs, describe → delete → the two-function chain through the broker →
 * the second function's log.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { npmEnv, repoRoot } from './support/packages.js';
import { describeResult, freePort, launch, run, until, waitForOk, type Result, type Running } from './support/process.js';

/** GET through the local gateway with the Knative URL's Host (Node's fetch neither resolves `*.localhost` nor sends a Host of ours). */
function viaGateway(gateway: string, host: string, path: string): Promise<{ status: number; body: string }> {
  const at = new URL(path, gateway);
  return new Promise((resolve, reject) => {
    httpGet({ hostname: at.hostname, port: at.port, path: at.pathname + at.search, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

export interface Block {
  text: string;
  /** Why the test leaves it out (the README's `<!-- clean-clone: not run: … -->`), if it does. */
  notRun?: string;
}

/** The README's shell blocks, in order. */
export function readmeBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(/(?:<!-- clean-clone: not run: ([^>]*?) -->\n)?```sh\n([\s\S]*?)```/g)].map((m) => ({ text: m[2]!, ...(m[1] && { notRun: m[1] }) }));
}

/** What a copy of this working tree holds, as `git clone` would give it. */
function copyTrackedFiles(to: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    const from = join(repoRoot, file);
    try {
      mkdirSync(dirname(join(to, file)), { recursive: true });
      copyFileSync(from, join(to, file));
    } catch (err) {
      // A file git tracks but the working tree deleted is not in a clone of it either.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

const work = mkdtempSync(join(tmpdir(), 'func-clean-clone-'));
const clone = join(work, 'repo');
const kubeconfig = join(clone, 'data', 'kubeconfig.yaml');
const running: Running[] = [];

afterAll(async () => {
  for (const r of running.reverse()) await r.stop();
  rmSync(work, { recursive: true, force: true });
});

interface Context {
  /** Where the README's blocks run: the clone for the root README, the generated project for a template's. */
  cwd: string;
  port: number;
  env: NodeJS.ProcessEnv;
  dev?: Running;
  gateway?: { url: string; host: string };
}

/** Runs a block to completion in the clone; fails with its output unless it exits 0. */
async function runBlock(block: string, ctx: Context): Promise<Result> {
  const r = await run('bash', ['-e', '-c', block], { cwd: ctx.cwd, env: ctx.env });
  expect(r.code, describeResult(r)).toBe(0);
  return r;
}

/** Starts a block that serves on ctx.port and waits for its readiness. */
async function serveBlock(block: string, ctx: Context, timeoutMs: number): Promise<Running> {
  const r = launch('bash', ['-e', '-c', block], { cwd: ctx.cwd, env: ctx.env });
  running.push(r);
  await waitForOk(`http://127.0.0.1:${ctx.port}/health/readiness`, r, timeoutMs);
  return r;
}

const greeting = async (ctx: Context, name: string) => (await fetch(`http://127.0.0.1:${ctx.port}/?name=${name}`)).text();

/** One README block's step: how it runs and what it must show. */
type Step = { matches: RegExp; run(block: string, ctx: Context): Promise<void> };

const steps: Step[] = [
  {
    matches: /^bash scripts\/install\.sh && npm start$/m,
    async run(block, ctx) {
      const hello = await serveBlock(block, ctx, 1_500_000);
      expect(await greeting(ctx, 'clone')).toBe('Hello, clone!\n');
      await hello.stop();
    },
  },
  {
    matches: /^npm create func \.\.\/my-function -- --template http --yes/m,
    async run(block, ctx) {
      const started = await serveBlock(block, ctx, 900_000);
      expect(await greeting(ctx, 'clone')).toContain('Hello, clone!');
      expect(started.output()).toMatch(/Packing @func\/runtime from the checkout/);
      expect(started.output()).toMatch(/Tests\s+\d+ passed/); // the project's npm test ran and passed
      expect(started.output()).toMatch(/func-runtime: serving .* at http:\/\/localhost:\d+ \(log level /);
      await started.stop();
    },
  },
  {
    matches: /npm run dev/,
    async run(block, ctx) {
      ctx.dev = await serveBlock(block, ctx, 120_000);
    },
  },
  {
    matches: /npm run invoke/,
    async run(block, ctx) {
      const r = await runBlock(block, ctx);
      expect(r.stdout).toContain('Hello, you!');
      await ctx.dev!.stop();
    },
  },
  {
    matches: /^npx cluster-api serve/m,
    async run(block, ctx) {
      // Pod and Service addresses of their own: other test clusters on this machine use the default loopback blocks.
      const [pods, services] = [64 + Math.floor(Math.random() * 64), 144 + Math.floor(Math.random() * 16)];
      const cluster = launch('bash', ['-e', '-c', block], {
        cwd: clone, env: { ...ctx.env, CLUSTER_API_PORT: '0', KUBECONFIG: '', CLUSTER_API_CLUSTER_CIDR: `127.${pods}.0.0/16`, CLUSTER_API_SERVICE_CLUSTER_IP_RANGE: `127.${services}.0.0/16` },
      });
      running.push(cluster);
      await until('the local cluster to listen', () => (/"msg":"listening"/.test(cluster.output()) ? true : undefined), 60_000);
      await until('the embedded node', async () => ((await run('kubectl', ['--kubeconfig', kubeconfig, 'get', 'nodes', '-o', 'name'])).stdout.trim() || undefined), 30_000);
      expect(cluster.output()).toMatch(/"registry":"127\.0\.0\.1:\d+"/);
    },
  },
  {
    matches: /npm run deploy\s+#/,
    async run(block, ctx) {
      const first = await runBlock(block, { ...ctx, env: { ...ctx.env, KUBECONFIG: '' } });
      // A Knative Service: its URL, and where this machine reaches it (the local gateway, by Host).
      expect(first.stdout).toMatch(/^\s+URL\s+http:\/\/my-function\.default\.localhost$/m);
      const [, host, url] = /^\s+from here\s+\S+\s+\(curl -H 'Host: (\S+)' (\S+)\/\)$/m.exec(first.stdout) ?? [];
      expect(url, `deploy printed no way to reach it from here:\n${first.stdout}`).toBeTruthy();
      ctx.gateway = { url: url!, host: host! };
      expect((await viaGateway(url!, host!, '/?name=you')).body).toContain('Hello, you!');
      // The prose's next step: an edit and `npm run deploy` again; the new revision takes the traffic.
      const project = join(work, 'my-function');
      const source = join(project, 'src', 'index.ts');
      const original = readFileSync(source, 'utf8');
      writeFileSync(source, original.replace('`Hello, ${name}!`', '`Hello again, ${name}!`'));
      const again = await run('npm', ['run', 'deploy'], { cwd: project, env: ctx.env });
      expect(again.code, describeResult(again)).toBe(0);
      const answers: string[] = [];
      await until('the new version at the printed URL', async () => {
        const res = await viaGateway(url!, host!, '/?name=you');
        expect(res.status).toBe(200);
        answers.push(res.body);
        return answers.at(-1)!.includes('Hello again, you!') || undefined;
      }, 60_000);
      expect(answers.slice(0, -1).every((a) => a.includes('Hello, you!'))).toBe(true);
      // The edit was this test's, not the README's: the project is the template's again (its own tests expect its greeting).
      writeFileSync(source, original);
    },
  },
  {
    matches: /func-runtime list && npx func-runtime logs/,
    async run(block, ctx) {
      const r = await runBlock(block, ctx);
      expect(r.stdout).toMatch(/^my-function\s/m);
      expect(r.stdout).toMatch(/func-runtime: serving /);
      expect(r.stdout).toMatch(/127\.0\.0\.1:\d+\/my-function@sha256:[0-9a-f]{64}/);
    },
  },
  {
    matches: /func-runtime invoke --name my-function/,
    async run(block, ctx) {
      const r = await runBlock(block, ctx);
      // The deploy step above redeployed an edit ("Hello again").
      expect(r.stdout).toMatch(/Hello( again)?, you!/);
    },
  },
  {
    matches: /func-runtime delete/,
    async run(block, ctx) {
      const r = await runBlock(block, ctx);
      expect(r.stdout + r.stderr).toMatch(/deleted .*ksvc\/my-function/);
      await until('the gateway to forget my-function', async () => ((await viaGateway(ctx.gateway!.url, ctx.gateway!.host, '/')).status === 404 ? true : undefined), 30_000);
    },
  },
  {
    matches: /^npm create func \.\.\/greeter/m,
    async run(block, ctx) {
      const r = await runBlock(block, ctx);
      expect(r.stdout).toMatch(/Trigger greeter-trigger-\w+ delivers to greeter/);
      expect(r.stdout).toMatch(/Trigger audit-trigger-\w+ delivers to audit/);
    },
  },
  {
    matches: /^cd \.\.\/audit && npx func-runtime logs$/m,
    async run(block, ctx) {
      // The broker delivers in the background: the block, run again until the log shows the greeting.
      const log = await until('the greeting in audit\'s log', async () => {
        const r = await runBlock(block, ctx);
        return r.stdout.includes('"ce-type":"com.example.customer.greeted"') && r.stdout.includes('"ce-source":"/greeter"') ? r.stdout : undefined;
      }, 60_000);
      expect(log).toMatch(/POST \/ received/);
    },
  },
];

/** The blocks both templates' READMEs share, and the cloudevents one's Trigger block. */
function templateSteps(kind: 'http' | 'cloudevents'): Step[] {
  const invoked = kind === 'http' ? 'Hello, Ada!' : 'com.example.customer.greeted';
  return [
    {
      matches: /^npm start/m,
      async run(block, ctx) {
        const started = await serveBlock(block, ctx, 120_000);
        await started.stop();
      },
    },
    {
      matches: /^npm run dev/m,
      async run(block, ctx) {
        ctx.dev = await serveBlock(block, ctx, 120_000);
      },
    },
    {
      matches: /^npm run invoke/m,
      async run(block, ctx) {
        const r = await runBlock(block, ctx);
        expect(r.stdout).toContain(invoked);
        if (kind === 'http') await ctx.dev!.stop();
      },
    },
    ...(kind === 'cloudevents'
      ? [{
        matches: /^cat > eventing\.yaml/m,
        async run(block: string, ctx: Context) {
          const seen = () => ctx.dev!.output().split('com.example.customer.created').length;
          const before = seen();
          const r = await runBlock(block, ctx);
          expect(r.stdout).toMatch(/True/);
          // The broker delivers the event to the function running here (the Trigger's subscriber).
          await until('the event at the running function', () => (seen() > before ? true : undefined), 30_000);
          await ctx.dev!.stop();
        },
      }]
      : []),
    { matches: /^npm test$/m, run: async (block, ctx) => void (await runBlock(block, ctx)) },
    {
      matches: /^npm run deploy +# build/m,
      async run(block, ctx) {
        expect((await runBlock(block, ctx)).stdout).toMatch(/func-runtime: deployed /);
      },
    },
    {
      matches: /^npm run deploy +# first version/m,
      async run(block, ctx) {
        const r = await runBlock(block, ctx);
        expect(r.stdout).toMatch(/func-runtime: undeployed /);
      },
    },
  ];
}

/** Plans a README's blocks against the steps (each block one step, or left out with a reason; each step some block's), then runs them in order. */
async function runReadme(markdown: string, readmeSteps: Step[], ctx: Context): Promise<{ run: number; left: number }> {
  const blocks = readmeBlocks(markdown);
  const plan = blocks.map((b, i) => {
    if (b.notRun) return { block: b, step: undefined };
    const found = readmeSteps.filter((s) => s.matches.test(b.text));
    expect(found.length, `README block ${i} matches ${found.length} steps:\n${b.text}`).toBe(1);
    return { block: b, step: found[0] };
  });
  // Every step is some block's: a block renamed in the README is not silently left out.
  expect(readmeSteps.filter((s) => !plan.some((p) => p.step === s))).toEqual([]);
  for (const { block, step } of plan) {
    if (!step) continue;
    if (/^npx cluster-api serve/m.test(block.text)) ctx.env = { ...ctx.env, KUBECONFIG: kubeconfig };
    await step.run(block.text, ctx);
  }
  return { run: plan.filter((p) => p.step).length, left: plan.filter((p) => !p.step).length };
}

let rootDone: Context | undefined;

describe('README: every command block, in order, from a clean clone', () => {
  it('runs each block (or says why not), and each shows what the README says', async () => {
    const started = Date.now();
    copyTrackedFiles(clone);
    const env = npmEnv({ PORT: String(await freePort()) });
    // The user's own npm cache, as a person who has installed before has one.
    delete env.npm_config_cache;
    const ctx: Context = { cwd: clone, port: Number(env.PORT), env };
    const { run: ran, left } = await runReadme(readFileSync(join(repoRoot, 'README.md'), 'utf8'), steps, ctx);
    console.log(`clean clone: ${ran} root README blocks run, ${left} left out with a reason, in ${Math.round((Date.now() - started) / 1000)} s`);
    rootDone = ctx;
  }, 3_000_000);

  it('then each template\'s README, in the project made from it (http: ../my-function, cloudevents: ../greeter), with the cluster still up', async (t) => {
    if (!rootDone) t.skip();
    const started = Date.now();
    for (const [kind, project] of [['http', 'my-function'], ['cloudevents', 'greeter']] as const) {
      const cwd = join(work, project);
      const { run: ran, left } = await runReadme(readFileSync(join(cwd, 'README.md'), 'utf8'), templateSteps(kind), { ...rootDone!, cwd, dev: undefined });
      console.log(`clean clone: ${ran} ${kind} template README blocks run, ${left} left out with a reason`);
    }
    console.log(`clean clone: the templates' READMEs in ${Math.round((Date.now() - started) / 1000)} s`);
  }, 900_000);
});
