/**
 * The CSR cleaner's rules (src/certificates/cleaner.ts), decided for a given time: issued, denied and
 * failed requests go an hour after that happened, pending ones a day after creation, and any whose
 * certificate has expired; nothing sooner. Certificates are real ones the signer issued.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/meta.js';
import { ensureCa } from '../../src/auth/tls.js';
import { staleReason } from '../../src/certificates/cleaner.js';
import { sign } from '../../src/certificates/signers.js';
import { createCsr, parseCsr } from '../../src/certificates/x509.js';

const dir = mkdtempSync(join(tmpdir(), 'csr-cleaner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const t0 = Date.parse('2026-12-01T10:00:00Z');
const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
const H = 3600_000;
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const csr = parseCsr(createCsr(privateKey, { commonName: 'jane' }));
const ca = ensureCa(join(dir, 'tls'));
/** A certificate valid for `seconds` from t0. */
const certificate = (seconds: number) => Buffer.from(sign(csr, ca, ['client auth'], seconds, undefined, t0)).toString('base64');

const request = (status: Record<string, unknown> = {}): KubeObject => ({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'r', creationTimestamp: iso(t0) }, spec: {}, status });
const condition = (type: string, at: number) => ({ type, status: 'True', lastUpdateTime: iso(at), lastTransitionTime: iso(at) });

describe('which requests the cleaner removes', () => {
  it('keeps a pending request for a day', () => {
    expect(staleReason(request(), t0 + 23 * H)).toBeUndefined();
    expect(staleReason(request(), t0 + 25 * H)).toBe('pending for more than a day');
  });

  it('removes an issued request an hour after approval, or once its certificate expired', () => {
    const issued = request({ conditions: [condition('Approved', t0)], certificate: certificate(24 * 3600) });
    expect(staleReason(issued, t0 + 0.5 * H)).toBeUndefined();
    expect(staleReason(issued, t0 + 2 * H)).toBe('issued more than an hour ago');
    const short = request({ conditions: [condition('Approved', t0 + 10 * H)], certificate: certificate(600) });
    expect(staleReason(short, t0 + 0.5 * H)).toBe('its certificate has expired');
  });

  it('keeps an approved request its signer has not issued (no pending rule once a condition is set)', () => {
    expect(staleReason(request({ conditions: [condition('Approved', t0)] }), t0 + 48 * H)).toBeUndefined();
  });

  it('removes denied and failed requests an hour later', () => {
    expect(staleReason(request({ conditions: [condition('Denied', t0)] }), t0 + 0.9 * H)).toBeUndefined();
    expect(staleReason(request({ conditions: [condition('Denied', t0)] }), t0 + 1.1 * H)).toBe('denied more than an hour ago');
    expect(staleReason(request({ conditions: [condition('Approved', t0), condition('Failed', t0)] }), t0 + 1.1 * H)).toBe('failed more than an hour ago');
  });

  it('treats an unreadable certificate or time as unknown, never as a reason to wait forever', () => {
    expect(staleReason(request({ conditions: [condition('Approved', t0)], certificate: 'bm90IGEgY2VydA==' }), t0 + 0.5 * H)).toBeUndefined();
    expect(staleReason(request({ conditions: [condition('Approved', t0)], certificate: 'bm90IGEgY2VydA==' }), t0 + 2 * H)).toBe('issued more than an hour ago');
    expect(staleReason(request({ conditions: [{ type: 'Denied', status: 'True', lastUpdateTime: 'yesterday' }] }), t0)).toBe('denied more than an hour ago');
  });
});
