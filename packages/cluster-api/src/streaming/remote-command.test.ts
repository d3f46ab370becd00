/**
 * The remote-command protocols below any runtime: the SPDY transport driven frame by frame (streams
 * by type, the command run once every asked-for stream is open, FIN on output, the Status on the
 * error stream; unknown and duplicate streams refused; a client that never opens its streams
 * dropped), the kubelet's options, the v4 Status and terminal sizes, malformed ones included.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RstStatus } from './spdy/frames.js';
import { ResizeEvents, outcomeStatus, remoteCommandOptions, type CommandRunner, type RemoteCommandOptions, type TerminalSize } from './remote-command.js';
import { serveSpdyCommand } from './remote-command-spdy.js';
import { SpdyTestClient } from './testing/spdy-client.js';
import { dial, listen, type Listening } from './testing/sockets.js';

describe('remote command over SPDY (v4.channel.k8s.io)', () => {
  let server: Listening | undefined;
  let client: SpdyTestClient | undefined;
  afterEach(async () => {
    client?.close();
    await server?.close();
    server = client = undefined;
  });

  async function start(options: RemoteCommandOptions, run: CommandRunner, streamCreationTimeoutMs?: number): Promise<SpdyTestClient> {
    server = await listen((socket) => void serveSpdyCommand(socket, options, run, ['sh', '-c', 'x'], { streamCreationTimeoutMs }));
    client = new SpdyTestClient(await dial(server.port));
    return client;
  }

  it('runs once error, stdin and stdout are open: stdin until FIN, stdout ended, the exit code as a Status', async () => {
    const c = await start({ stdin: true, stdout: true, stderr: false, tty: false }, async ({ stdin, stdout }) => {
      for await (const chunk of stdin!) stdout!.write(`echo:${chunk}`);
      return { exitCode: 2 };
    });
    const error = c.open({ streamtype: 'error' });
    const stdin = c.open({ streamtype: 'stdin' });
    const stdout = c.open({ streamtype: 'stdout' });
    c.data(stdin, 'abc', true);
    expect((await c.readStream(stdout)).toString()).toBe('echo:abc');
    expect(JSON.parse((await c.readStream(error)).toString())).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '2' }] } });
    await c.closedWithin();
  });

  it('hands terminal sizes on in order, and stops at one that is not JSON', async () => {
    const sizes: TerminalSize[] = [];
    const c = await start({ stdin: false, stdout: true, stderr: false, tty: true }, async ({ resize }) => {
      for await (const size of resize!) sizes.push(size);
    });
    const error = c.open({ streamtype: 'error' });
    c.open({ streamtype: 'stdout' });
    const resize = c.open({ streamtype: 'resize' });
    c.data(resize, '{"Width":80,"Height":24}\n{"Width":100,');
    c.data(resize, '"Height":40}\n{not json}\n{"Width":1,"Height":1}\n');
    expect(JSON.parse((await c.readStream(error)).toString())).toEqual({ metadata: {}, status: 'Success' });
    expect(sizes).toEqual([{ width: 80, height: 24 }, { width: 100, height: 40 }]);
  });

  it('refuses unknown and duplicate stream types (RST_STREAM) and still runs', async () => {
    const c = await start({ stdin: false, stdout: true, stderr: false, tty: false }, async ({ stdout }) => void stdout!.write('ran'));
    const unknown = c.open({ streamtype: 'video' });
    expect(await c.next((f) => f.type === 'rst_stream' && f.streamId === unknown)).toMatchObject({ status: RstStatus.Cancel });
    const error = c.open({ streamtype: 'error' });
    const again = c.open({ streamtype: 'error' });
    expect(await c.next((f) => f.type === 'rst_stream' && f.streamId === again)).toBeDefined();
    const stdout = c.open({ streamtype: 'stdout' });
    expect((await c.readStream(stdout)).toString()).toBe('ran');
    expect(JSON.parse((await c.readStream(error)).toString()).status).toBe('Success');
  });

  it('drops a client that never opens the streams it asked for', async () => {
    let ran = false;
    const c = await start({ stdin: false, stdout: true, stderr: true, tty: false }, async () => void (ran = true), 200);
    c.open({ streamtype: 'error' });
    await c.closedWithin();
    expect(ran).toBe(false);
  });

  it('a runner failure that is not a RemoteCommandError reaches the client as a plain message, never its text', async () => {
    const c = await start({ stdin: false, stdout: true, stderr: false, tty: false }, async () => {
      throw new Error('ENOENT /secret/path');
    });
    const error = c.open({ streamtype: 'error' });
    c.open({ streamtype: 'stdout' });
    expect(JSON.parse((await c.readStream(error)).toString())).toEqual({ metadata: {}, status: 'Failure', message: 'error executing command in container' });
  });
});

describe('the kubelet options and the v4 Status', () => {
  it('reads "1" as yes, drops stderr with a tty, and needs one stream', () => {
    expect(remoteCommandOptions(new URLSearchParams('input=1&output=1&error=1&tty=1'))).toEqual({ stdin: true, stdout: true, stderr: false, tty: true });
    expect(remoteCommandOptions(new URLSearchParams('output=true&error=1'))).toEqual({ stdin: false, stdout: false, stderr: true, tty: false });
    expect(() => remoteCommandOptions(new URLSearchParams('output=yes'))).toThrow('you must specify at least 1 of stdin, stdout, stderr');
  });

  it('words the outcome as writeErrorV4 does', () => {
    expect(outcomeStatus({ exitCode: 0 })).toEqual({ metadata: {}, status: 'Success' });
    expect(outcomeStatus({ error: 'no such container' })).toEqual({ metadata: {}, status: 'Failure', message: 'no such container' });
    expect(outcomeStatus({ exitCode: 137 }, ['sleep', '9'])).toMatchObject({ message: 'command terminated with non-zero exit code: error executing command [sleep 9], exit code 137', details: { causes: [{ reason: 'ExitCode', message: '137' }] } });
  });

  it('reads field names regardless of case, as Go decodes them (client-node sends "height" and "width")', async () => {
    const events = new ResizeEvents();
    expect(events.push('{"height":33,"width":101}')).toBe(true);
    expect(events.push('{"WIDTH":80,"Height":24}')).toBe(true);
    expect(events.push('{"height":"33"}')).toBe(false);
    const got: TerminalSize[] = [];
    for await (const s of events) got.push(s);
    expect(got).toEqual([{ width: 101, height: 33 }, { width: 80, height: 24 }]);
  });

  it('takes sizes in range only', async () => {
    for (const bad of ['{"Width":-1,"Height":2}', '{"Width":70000}', '[1,2]', 'null', '{"Width":1.5}', '{"height":-3}']) {
      const events = new ResizeEvents();
      expect(events.push(bad)).toBe(false);
      const got: TerminalSize[] = [];
      for await (const s of events) got.push(s);
      expect(got).toEqual([]);
    }
  });
});
