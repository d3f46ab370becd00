/**
 * The func-style verbs that need no cluster, through the built CLI: `--version`, "did you mean",
 * `completion` run in real bash (and zsh and fish where installed), `subscribe` and `config
 * envs|volumes|labels` editing func.yaml in place (then read by `deploy --dry-run`), their prompts
 * on a real terminal (`script` gives the command a pty), and every malformed input: one line on
 * stderr, a non-zero exit, no stack.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { fixture, runCli, runCliToExit } from './helpers/cli.js';
import { CLI, copyFixture, killAll } from './dev-helpers.js';

const exec = promisify(execFile);
/** Many CLI runs in one test: bounded generously, as the machine is shared (never a speed check). */
const MANY = 180_000;
const work = mkdtempSync(join(tmpdir(), 'func-verbs-'));
const removals: (() => void)[] = [];
afterAll(async () => {
  await killAll();
  for (const r of removals) r();
  rmSync(work, { recursive: true, force: true });
});

/** No cluster anywhere: a kubeconfig that does not exist, a HOME of its own. */
const ENV = { ...process.env, HOME: join(work, 'home'), XDG_CACHE_HOME: join(work, 'cache'), DOCKER_CONFIG: join(work, 'no-docker'), KUBECONFIG: join(work, 'none.yaml'), CI: '' };

const cli = (args: string[], cwd = work) => runCliToExit(args, ENV, { cwd, deadlineMs: 120_000 });

function project(): string {
  const fx = copyFixture('deployable');
  removals.push(fx.remove);
  return fx.dir;
}

const yamlOf = (dir: string) => readFileSync(join(dir, 'func.yaml'), 'utf8');

/** A clear one-line error: exactly one line on stderr (plus the usage hint for usage errors), no stack. */
function expectOneLine(res: { code: number | null; stderr: string }, code: number, message: RegExp): void {
  expect(res.code, res.stderr).toBe(code);
  const lines = res.stderr.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^func-runtime: /);
  expect(lines[0]).toMatch(message);
  expect(lines.slice(1).filter((l) => l !== 'Run func-runtime --help for usage.')).toEqual([]);
  expect(res.stderr).not.toMatch(/\n\s+at /);
}

describe('--version', () => {
  it('prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    const res = await cli(['--version']);
    expect(res).toMatchObject({ code: 0, stdout: `${version}\n` });
  });
});

describe('run', () => {
  it('is dev under Knative func\'s name: serves the source', async () => {
    const r = await runCli(['run', fixture('esm-default')]);
    try {
      expect(await fetch(`${r.url}/p`).then((res) => res.text())).toBe('esm default /p');
    } finally {
      await r.stop();
    }
  });
});

describe('did you mean', () => {
  it.each([
    [['deplyo'], /unknown command "deplyo"\. Did you mean "deploy"\?/],
    [['lsit'], /unknown command "lsit"\. Did you mean "list"\?/],
    [['subscibe', '--filter', 'type=x'], /Did you mean "subscribe"\?/],
    [['config', 'envz'], /Unknown argument: envz\. Did you mean "envs"\?/],
    [['secret', 'creat', 'x'], /Did you mean "create"\?/],
    [['deploy', '--imgae', 'x'], /Unknown argument: imgae\. Did you mean "--image"\?/],
  ])('%j: suggests the command or flag meant, exit 2', async (args, message) => {
    expectOneLine(await cli(args), 2, message);
  });

  it('a word close to no command is still a path to serve', async () => {
    expectOneLine(await cli(['no-such-function-here']), 1, /No function at .*no-such-function-here: the path does not exist/);
  });
});

describe('completion', () => {
  const script = async (shell: string) => {
    const res = await cli(['completion', shell]);
    expect(res.code, res.stderr).toBe(0);
    const file = join(work, `completion.${shell}`);
    writeFileSync(file, res.stdout);
    return file;
  };
  /** What the bash function offers for a command line whose last word is being typed. */
  const bash = async (file: string, line: string[]) => {
    const words = line.map((w) => `'${w}'`).join(' ');
    const { stdout } = await exec('bash', ['-c', `source '${file}'; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _func_runtime; printf '%s\\n' "\${COMPREPLY[@]}"`]);
    return stdout.split('\n').filter(Boolean);
  };

  it('bash: verbs, nested subcommands, flags and positional choices', async () => {
    const file = await script('bash');
    expect(await bash(file, ['func-runtime', 'de'])).toEqual(['dev', 'deploy', 'delete', 'describe']);
    expect(await bash(file, ['func-runtime', 'config', ''])).toEqual(['envs', 'volumes', 'labels', '--help', '--path', '-p']);
    expect(await bash(file, ['func-runtime', 'config', 'volumes', 'add', '--m'])).toEqual(['--mount-path', '--medium']);
    expect(await bash(file, ['func-runtime', 'deploy', '--ima'])).toEqual(['--image', '--images']);
    expect(await bash(file, ['func-runtime', 'secret', 'create', 'api', '--from-'])).toEqual(['--from-literal', '--from-file', '--from-env-file']);
    expect(await bash(file, ['func-runtime', 'completion', ''])).toEqual(['bash', 'zsh', 'fish', '--help']);
    expect(await bash(file, ['func-runtime', 'subscribe', '--filter', 'type=x', '--s'])).toEqual(['--source']);
  }, MANY);

  const have = (shell: string) => ['/usr/bin', '/bin', '/usr/local/bin'].some((d) => existsSync(join(d, shell)));

  it.runIf(have('zsh'))('zsh: the same completions through bashcompinit', async () => {
    const file = await script('zsh');
    // bashcompinit calls the function under sh emulation (0-based arrays); so does this.
    const { stdout } = await exec('zsh', ['-c', `source '${file}'; emulate sh -c 'COMP_WORDS=(func-runtime config envs ""); COMP_CWORD=3; _func_runtime; print -l "\${COMPREPLY[@]}"'`], { env: { ...ENV, ZDOTDIR: work } });
    expect(stdout.split('\n').filter(Boolean).slice(0, 3)).toEqual(['list', 'add', 'remove']);
  });

  it.runIf(have('fish'))('fish: subcommands and flags per command', async () => {
    const file = await script('fish');
    const complete = async (line: string) => (await exec('fish', ['--no-config', '-c', `source '${file}'; complete -C '${line}'`])).stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]);
    expect(await complete('func-runtime subsc')).toEqual(['subscribe']);
    expect(await complete('func-runtime config labels ')).toEqual(expect.arrayContaining(['add', 'list', 'remove']));
    expect(await complete('func-runtime logs --fo')).toEqual(['--follow']);
  });

  it('an unknown shell is a usage error', async () => {
    expectOneLine(await cli(['completion', 'tcsh']), 2, /Invalid values:.*shell.*"tcsh"/);
  });
});

describe('subscribe', () => {
  it('writes deploy.subscriptions in place (comments kept); deploy makes the Trigger from it', async () => {
    const dir = project();
    const first = await cli(['subscribe', '--filter', 'type=com.example.order', '--source', 'orders', '-p', dir]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/subscribed deployable to Broker orders for type=com\.example\.order in func\.yaml deploy\.subscriptions; the next deploy makes Trigger deployable-trigger-[0-9a-f]{8}/);
    expect((await cli(['subscribe', '-f', 'type=com.example.order', '-s', 'orders', '-p', dir])).stdout).toContain('func.yaml already subscribes deployable to Broker orders');
    expect((await cli(['subscribe', '-p', dir])).stdout).toContain('to Broker default for every event');
    const yaml = yamlOf(dir);
    expect(yaml.startsWith('# A function that `build --image` and `deploy` tests build and run.\n')).toBe(true);
    expect(yaml).toContain('  subscriptions:\n    - source: orders\n      filters:\n        type: com.example.order\n    - source: default\n');
    const dry = await cli(['deploy', dir, '--deployer', 'raw', '--dry-run', '-o', 'json']);
    expect(dry.code, dry.stderr).toBe(0);
    const triggers = (JSON.parse(dry.stdout) as { items: { kind: string; spec: Record<string, any> }[] }).items.filter((m) => m.kind === 'Trigger');
    expect(triggers.map((t) => [t.spec.broker, t.spec.filter?.attributes])).toEqual([['orders', { type: 'com.example.order' }], ['default', undefined]]);
  }, MANY);

  it.each([
    [['--filter', 'typecom'], 1, /--filter "typecom": expected key=value \(for example type=com\.example\.order\)\./],
    [['--filter', '=x'], 1, /--filter "=x": expected key=value/],
    [['--filter', 'Type-X=y'], 1, /--filter Type-X=…: a CloudEvent attribute name is 1-20 lower case letters or digits/],
    [['--source', 'Bad_Broker'], 1, /Broker name "Bad_Broker" is not valid/],
    [['--bogus-flag'], 2, /Unknown argument: bogus-flag/],
  ])('%j: one line, exit %i, func.yaml unchanged', async (args, code, message) => {
    const dir = project();
    const before = yamlOf(dir);
    expectOneLine(await cli(['subscribe', '-p', dir, ...args]), code, message);
    expect(yamlOf(dir)).toBe(before);
  });

  it('without a func.yaml says how to make one', async () => {
    expectOneLine(await cli(['subscribe', '-p', work]), 1, /No func\.yaml in .*: .*npm create func/);
  });
});

describe('config envs|volumes|labels', () => {
  it('add, list (text, JSON), remove through flags; the file keeps its comment; deploy reads the result', async () => {
    const dir = project();
    const ok = async (args: string[]) => {
      const res = await cli(['config', ...args, '-p', dir]);
      expect(res.code, res.stderr).toBe(0);
      return res.stdout;
    };
    expect(await ok(['envs', 'add', '--name', 'GREETING', '--value', 'hi'])).toBe('func-runtime: added environment variable GREETING in func.yaml run.envs; the next deploy applies it\n');
    await ok(['envs', 'add', '--name', 'API_KEY', '--value', '{{ secret:api:key }}']);
    await ok(['envs', 'add', '--value', '{{ configMap:settings }}']);
    expect(await ok(['envs', 'add', '--name', 'GREETING', '--value', 'hello'])).toContain('replaced environment variable GREETING');
    expect(await ok(['envs'])).toBe('NAME        VALUE\nGREETING    hello\nAPI_KEY     {{ secret:api:key }}\n(all keys)  {{ configMap:settings }}\n');
    await ok(['volumes', 'add', '--type', 'secret', '--source', 'certs', '--mount-path', '/etc/certs']);
    await ok(['volumes', 'add', '--type', 'emptyDir', '--mount-path', '/scratch', '--medium', 'Memory']);
    await ok(['volumes', 'add', '--type', 'pvc', '--source', 'data', '--mount-path', '/data', '--read-only']);
    expect(JSON.parse(await ok(['volumes', 'list', '-o', 'json']))).toEqual([{ secret: 'certs', path: '/etc/certs' }, { emptyDir: { medium: 'Memory' }, path: '/scratch' }, { persistentVolumeClaim: { claimName: 'data', readOnly: true }, path: '/data' }]);
    await ok(['labels', 'add', '--key', 'team', '--value', 'shop']);
    await ok(['labels', 'add', '--name', 'example.com/tier', '--value', 'backend']);
    expect(await ok(['labels', 'list', '-o', 'yaml'])).toBe('- key: team\n  value: shop\n- key: example.com/tier\n  value: backend\n');
    expect(yamlOf(dir).startsWith('# A function that')).toBe(true);

    const dry = await cli(['deploy', dir, '--deployer', 'raw', '--dry-run', '-o', 'json']);
    expect(dry.code, dry.stderr).toBe(0);
    const deployment = (JSON.parse(dry.stdout) as { items: Record<string, any>[] }).items.find((m) => m.kind === 'Deployment')!;
    const container = deployment.spec.template.spec.containers[0];
    expect(container.env).toEqual(expect.arrayContaining([{ name: 'GREETING', value: 'hello' }, { name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'api', key: 'key' } } }]));
    expect(container.envFrom).toEqual([{ configMapRef: { name: 'settings' } }]);
    expect(container.volumeMounts.map((m: { mountPath: string }) => m.mountPath)).toEqual(['/etc/certs', '/scratch', '/data']);
    expect(deployment.metadata.labels).toMatchObject({ team: 'shop', 'example.com/tier': 'backend' });

    expect(await ok(['envs', 'remove', '--name', 'API_KEY'])).toContain('removed environment variable API_KEY');
    await ok(['volumes', 'remove', '--mount-path', '/scratch']);
    await ok(['labels', 'remove', '--key', 'team']);
    await ok(['labels', 'remove', '--key', 'example.com/tier']);
    expect(await ok(['labels'])).toBe('No labels in func.yaml deploy.labels.\n');
    expect(yamlOf(dir)).not.toContain('labels:');
    expect(JSON.parse(await ok(['envs', '-o', 'json']))).toEqual([{ name: 'GREETING', value: 'hello' }, { value: '{{ configMap:settings }}' }]);
  }, MANY);

  it.each([
    [['envs', 'add', '--name', 'X', '--value', '{{ nope:x }}'], 1, /run\.envs entry X \(value "\{\{ nope:x \}\}"\): unknown source "nope"/],
    [['envs', 'add', '--name', 'X', '--value', '{{ secret:s }}'], 1, /a named variable takes one key: \{\{ secret:s:KEY \}\}/],
    [['envs', 'add', '--value', 'plain'], 1, /an entry without a name must import a Secret or ConfigMap/],
    [['envs', 'add', '--name', 'X'], 1, /config envs add: --value is required \(stdin is not a terminal, so there is nothing to ask on\)\./],
    [['envs', 'remove', '--name', 'GRETING'], 1, /has no environment variable "GRETING"\. Did you mean "GREETING"\? It has: GREETING\./],
    [['envs', 'remove'], 1, /config envs remove: --name is required/],
    [['volumes', 'add', '--type', 'secret', '--source', 's', '--mount-path', 'relative'], 1, /every volume needs an absolute path to mount at \(got "relative"\)/],
    [['volumes', 'add', '--type', 'nfs', '--mount-path', '/x'], 2, /Invalid values:.*type.*"nfs"/],
    [['volumes', 'add', '--type', 'pvc', '--mount-path', '/x'], 1, /config volumes add: --source is required/],
    [['labels', 'add', '--key', 'Bad Key', '--value', 'x'], 1, /Label key "Bad Key" is not valid/],
    [['labels', 'add', '--key', 'ok', '--value', 'not ok!'], 1, /Label value "not ok!" \(key ok\) is not valid/],
    [['labels', 'add', '--key', 'ok', '--bogus'], 2, /Unknown argument: bogus/],
    [['envs', 'add', '--nmae', 'X'], 2, /Unknown argument: nmae\. Did you mean "--name"\?/],
    [[], 1, /config: name what to configure — config envs\|volumes\|labels \[list\|add\|remove\] \(stdin is not a terminal/],
  ])('%j: one line, exit %i, func.yaml unchanged', async (args, code, message) => {
    const dir = project();
    expect((await cli(['config', 'envs', 'add', '--name', 'GREETING', '--value', 'hi', '-p', dir])).code).toBe(0);
    const before = yamlOf(dir);
    expectOneLine(await cli(['config', ...args, '-p', dir]), code, message);
    expect(yamlOf(dir)).toBe(before);
  });

  it('a func.yaml that breaks the schema is named, and left as it was', async () => {
    const dir = project();
    writeFileSync(join(dir, 'func.yaml'), `${yamlOf(dir)}bogusField: 1\n`);
    const before = yamlOf(dir);
    expectOneLine(await cli(['config', 'labels', 'add', '--key', 'a', '--value', 'b', '-p', dir]), 1, /func\.yaml does not match func\.schema\.json: \/: unknown field "bogusField"/);
    expect(yamlOf(dir)).toBe(before);
  });

  describe('on a terminal, asks for what the flags leave out', () => {
    /** Runs the command on a pty (util-linux `script`), typing `answers`; its exit code and what the terminal showed. */
    const onTerminal = async (args: string[], answers: string[]) => {
      const command = [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(' ');
      const child = spawn('script', ['-qec', command, '/dev/null'], { env: ENV, stdio: ['pipe', 'pipe', 'pipe'] });
      let screen = '';
      child.stdout.on('data', (d: Buffer) => (screen += d));
      child.stdin.end(answers.map((a) => `${a}\n`).join(''));
      const [code] = await once(child, 'exit');
      return { code: code as number | null, screen };
    };
    const haveScript = ['/usr/bin/script', '/bin/script'].some((f) => existsSync(f));

    it.runIf(haveScript)('envs add: name and value; volumes add: pick the type by number; labels remove: pick from the list', async () => {
      const dir = project();
      const env = await onTerminal(['config', 'envs', 'add', '-p', dir], ['GREETING', 'hello there']);
      expect(env.code, env.screen).toBe(0);
      expect(env.screen).toContain('? Variable name (empty: import every key of a Secret or ConfigMap): ');
      expect(env.screen).toContain('added environment variable GREETING');
      const vol = await onTerminal(['config', 'volumes', 'add', '-p', dir, '--source', 'settings'], ['2', '/etc/settings']);
      expect(vol.code, vol.screen).toBe(0);
      expect(vol.screen).toContain('? Volume type');
      expect(vol.screen).toContain('2) configMap');
      expect((await cli(['config', 'labels', 'add', '--key', 'a', '--value', '1', '-p', dir])).code).toBe(0);
      expect((await cli(['config', 'labels', 'add', '--key', 'b', '--value', '2', '-p', dir])).code).toBe(0);
      const rm = await onTerminal(['config', 'labels', 'remove', '-p', dir], ['2']);
      expect(rm.code, rm.screen).toBe(0);
      expect(rm.screen).toContain('removed label b');
      expect(yamlOf(dir)).toContain('run:\n  envs:\n    - name: GREETING\n      value: hello there\n  volumes:\n    - configMap: settings\n      path: /etc/settings\n');
      expect(yamlOf(dir)).toContain('  labels:\n    - key: a\n      value: "1"\n');
    }, MANY);

    it.runIf(haveScript)('config alone: pick what and how from menus, as func config', async () => {
      const dir = project();
      const res = await onTerminal(['config', '-p', dir], ['labels', '2', 'app', 'web']);
      expect(res.code, res.screen).toBe(0);
      expect(res.screen).toContain('? What to configure?');
      expect(res.screen).toContain('? labels: do what?');
      expect(yamlOf(dir)).toContain('  labels:\n    - key: app\n      value: web\n');
    });

    it.runIf(haveScript)('input that ends before the answers is a one-line cancel, func.yaml unchanged', async () => {
      const dir = project();
      const before = yamlOf(dir);
      const res = await onTerminal(['config', 'envs', 'add', '-p', dir], ['GREETING']);
      expect(res.code).toBe(1);
      expect(res.screen).toContain('func-runtime: cancelled: no answer (the input ended or Ctrl-C); func.yaml is unchanged.');
      expect(res.screen).not.toMatch(/\n\s+at /);
      expect(yamlOf(dir)).toBe(before);
    });
  });
});

describe('secret: malformed input is refused before the cluster is asked', () => {
  it.each([
    [['create', 'api', '--from-literal', 'novalue'], 1, /--from-literal "novalue": expected key=value \(for example API_KEY=s3cr3t\)\./],
    [['create', 'api', '--from-literal', 'bad key=x'], 1, /key "bad key" is not valid/],
    [['create', 'api', '--from-literal', 'a=1', '--from-literal', 'a=2'], 1, /key a is given more than once/],
    [['create', 'api', '--from-file', '/no/such/file'], 1, /--from-file \/no\/such\/file: no such file\./],
    [['create', 'api', '--from-file', '/'], 1, /is a directory/],
    [['create', 'api'], 1, /A Secret needs at least one key/],
    [['create', 'Bad_Name', '--from-literal', 'a=1'], 1, /Secret name "Bad_Name" is not valid/],
    [['create'], 2, /Not enough non-option arguments/],
    [['create', 'api', '--from-literl', 'a=1'], 2, /Did you mean "--from-literal"\?/],
    [['delete'], 2, /Not enough non-option arguments/],
  ])('%j: one line, exit %i', async (args, code, message) => {
    expectOneLine(await cli(['secret', ...args]), code, message);
  });

  it('an env file with a line that is not KEY=value', async () => {
    const file = join(work, 'bad.env');
    writeFileSync(file, 'A=1\n# a comment\nnot a pair\n');
    expectOneLine(await cli(['secret', 'create', 'api', '--from-env-file', file]), 1, /--from-env-file .*bad\.env: a line is not KEY=value \(line 3\)\./);
  });

  it('without a cluster to reach, says how to start one', async () => {
    expectOneLine(await cli(['secret', 'list']), 1, /none\.yaml.*npx cluster-api serve/);
  });
});
