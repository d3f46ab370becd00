import { describe, expect, it } from 'vitest';
import { formatLine, splitStamp, timeKey } from './logs.js';

describe('logs formatting', () => {
  it('splits the kubelet timestamp off a line', () => {
    expect(splitStamp('2026-11-25T10:00:00.123456789Z {"a":1}')).toEqual({ time: '2026-11-25T10:00:00.123456789Z', text: '{"a":1}' });
    expect(splitStamp('plain')).toEqual({ text: 'plain' });
  });

  it('orders RFC 3339 times whose fractions the kubelet shortened', () => {
    const times = ['2026-11-25T10:00:00.12Z', '2026-11-25T10:00:00.1Z', '2026-11-25T10:00:00Z', '2026-11-25T10:00:00.100000001Z'];
    expect([...times].sort((a, b) => timeKey(a).localeCompare(timeKey(b)))).toEqual(['2026-11-25T10:00:00Z', '2026-11-25T10:00:00.1Z', '2026-11-25T10:00:00.100000001Z', '2026-11-25T10:00:00.12Z']);
  });

  it('pretty: pod, time, level, message, other fields; pid and hostname left out', () => {
    const line = { time: '2026-11-25T10:00:00.5Z', text: JSON.stringify({ level: 40, time: Date.parse('2026-11-25T10:00:01.250Z'), pid: 7, hostname: 'h', reqId: 'r1', msg: 'slow' }) };
    expect(formatLine('hello-abc', line, false)).toBe('hello-abc  10:00:01.250 WARN  slow {"reqId":"r1"}');
    expect(formatLine('hello-abc', { time: '2026-11-25T10:00:00.5Z', text: 'not json' }, false)).toBe('hello-abc  10:00:00.500 not json');
  });

  it('json: the runtime\'s object with the pod added; other lines wrapped', () => {
    expect(JSON.parse(formatLine('p', { text: '{"level":30,"msg":"hi"}' }, true))).toEqual({ pod: 'p', level: 30, msg: 'hi' });
    expect(JSON.parse(formatLine('p', { time: 't', text: 'boot' }, true))).toEqual({ pod: 'p', time: 't', msg: 'boot' });
  });
});
