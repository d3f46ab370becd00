import { describe, expect, it } from 'vitest';
import { requestBaseUrl } from './base-url.js';

describe('requestBaseUrl', () => {
  it.each([
    [{ host: 'localhost:8080' }, false, 'http://localhost:8080'],
    [{ host: 'API.Example.com' }, false, 'http://api.example.com'],
    [{ host: 'h.example' }, true, 'https://h.example'],
    [{ host: '127.0.0.1:1' }, false, 'http://127.0.0.1:1'],
    [{ host: '[::1]:8080' }, false, 'http://[::1]:8080'],
    [{ host: 'h', 'x-forwarded-proto': 'https' }, false, 'https://h'],
    [{ host: 'h', 'x-forwarded-proto': 'HTTPS, http' }, false, 'https://h'],
    [{ host: 'h', 'x-forwarded-proto': 'http' }, true, 'http://h'],
    [{ host: 'h', 'x-forwarded-proto': 'javascript' }, false, 'http://h'],
    [{ host: 'h', 'x-forwarded-proto': ['https'] }, false, 'https://h'],
  ])('%j (tls %s) → %s', (headers, tls, url) => {
    expect(requestBaseUrl(headers as never, tls)).toBe(url);
  });

  it.each([
    [{}],
    [{ host: '' }],
    [{ host: 'evil.example/path' }],
    [{ host: 'a@b' }],
    [{ host: 'h:port' }],
    [{ host: 'h"><script>' }],
    [{ host: '-h' }],
    [{ host: 'h:123456' }],
  ])('refuses %j', (headers) => {
    expect(requestBaseUrl(headers, false)).toBeUndefined();
  });
});
