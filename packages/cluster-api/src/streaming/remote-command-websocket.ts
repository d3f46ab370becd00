/**
 * exec and attach over the kubelet's WebSocket channels (remotecommand/websocket.go and
 * apimachinery's wsstream), what kubectl 1.30+ (`v5.channel.k8s.io`), client-node's Exec/Attach and
 * the Python client's `stream` (`v4.channel.k8s.io`) speak. Every message starts with its channel:
 * 0 stdin, 1 stdout, 2 stderr, 3 error (the Status when the command ends), 4 resize (a JSON
 * terminal size); a byte, or an ASCII digit before base64 text in `v4.base64.channel.k8s.io`. In v5
 * the client half-closes stdin with channel 255 naming the channel ([255, 0]). The server first sends
 * an empty message on its lowest output channel (the connection is ready), then the output, then
 * the Status, and closes.
 */
import { PassThrough, Writable } from 'node:stream';
import { WebSocket } from 'ws';
import { channelMessage, sendChannel } from './websocket.js';
import { ResizeEvents, runCommand, type CommandRunner, type RemoteCommandOptions } from './remote-command.js';

const Stdin = 0;
const Stdout = 1;
const Stderr = 2;
const ErrorChannel = 3;
const Resize = 4;
const CloseChannel = 255;

/** Serves one command on an accepted WebSocket; resolves once the connection is closed. */
export function serveWebSocketCommand(ws: WebSocket, protocol: string, options: RemoteCommandOptions, run: CommandRunner, command: readonly string[] = []): Promise<void> {
  const base64 = protocol === 'v4.base64.channel.k8s.io';
  const v5 = protocol === 'v5.channel.k8s.io';
  const send = (channel: number, data: Buffer, done: () => void) => sendChannel(ws, base64, channel, data, done);
  const output = (channel: number) =>
    new Writable({
      write: (chunk: Buffer, _encoding, done) => (ws.readyState === WebSocket.OPEN ? send(channel, chunk, () => done()) : done(new Error('client gone'))),
    });
  const stdin = options.stdin ? new PassThrough() : undefined;
  const stdout = options.stdout ? output(Stdout) : undefined;
  const stderr = options.stderr ? output(Stderr) : undefined;
  const resize = options.tty ? new ResizeEvents() : undefined;
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));

  ws.on('message', (data: Buffer) => {
    const message = channelMessage(data, base64);
    if (!message || message.length === 0) return;
    const channel = message[0]!;
    const payload = message.subarray(1);
    if (channel === Stdin && stdin && !stdin.writableEnded && payload.length > 0) {
      if (!stdin.write(payload)) {
        ws.pause();
        stdin.once('drain', () => ws.resume());
      }
    } else if (channel === Resize && resize) {
      resize.push(payload.toString('utf8'));
    } else if (channel === CloseChannel && v5 && payload[0] === Stdin) {
      stdin?.end();
    }
  });
  ws.on('error', () => ws.terminate());
  void closed.then(() => {
    // The client is gone: the command sees its input end and its output fail.
    stdin?.end();
    stdout?.destroy();
    stderr?.destroy();
    resize?.end();
  });

  send(options.stdout ? Stdout : options.stderr ? Stderr : ErrorChannel, Buffer.alloc(0), () => undefined);
  return runCommand(run, { stdin, stdout, stderr, tty: options.tty, resize }, command).then((status) => {
    resize?.end();
    send(ErrorChannel, Buffer.from(JSON.stringify(status)), () => ws.close(1000));
    return closed;
  });
}

