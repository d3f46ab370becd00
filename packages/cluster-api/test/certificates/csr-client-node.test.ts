/**
 * CertificateSigningRequest with @kubernetes/client-node (JSON, its typed CertificatesV1Api) against
 * an in-process `serve`: create (the request as base64 bytes), approve through the approval
 * subresource, read the issued certificate; a bad request is a 422 Status with the field's cause.
 */
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiException, CertificatesV1Api, KubeConfig, type V1CertificateSigningRequest } from '@kubernetes/client-node';
import { createCsr } from '../../src/certificates/x509.js';
import { startKubectlServer, type KubectlServer } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

let s: KubectlServer;
let api: CertificatesV1Api;

beforeAll(async () => {
  s = await startKubectlServer();
  const kc = new KubeConfig();
  kc.loadFromFile(s.served.kubeconfig!);
  api = kc.makeApiClient(CertificatesV1Api);
}, 60_000);

afterAll(async () => {
  await s?.close();
});

const request = (cn: string) => Buffer.from(createCsr(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey, { commonName: cn, organizations: ['ops'] })).toString('base64');

describe('CertificatesV1Api', () => {
  it('creates, approves and reads the certificate', async () => {
    const body: V1CertificateSigningRequest = {
      apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'ops-user' },
      spec: { request: request('ops-user'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], expirationSeconds: 86400 },
    };
    const created = await api.createCertificateSigningRequest({ body });
    expect(created.spec.username).toBe('admin');
    created.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'ClientNodeApprove', message: 'approved by a test' }] };
    const approved = await api.replaceCertificateSigningRequestApproval({ name: 'ops-user', body: created });
    expect(approved.status?.conditions?.[0]).toMatchObject({ type: 'Approved', reason: 'ClientNodeApprove' });
    expect(approved.status?.conditions?.[0]?.lastUpdateTime).toBeInstanceOf(Date);
    const certificate = await until('issued', async () => (await api.readCertificateSigningRequest({ name: 'ops-user' })).status?.certificate);
    const cert = new X509Certificate(Buffer.from(certificate, 'base64'));
    expect(cert.subject).toBe('O=ops\nCN=ops-user');
    const listed = await api.listCertificateSigningRequest({ fieldSelector: 'spec.signerName=kubernetes.io/kube-apiserver-client' });
    expect(listed.items.map((c) => c.metadata?.name)).toEqual(['ops-user']);
  });

  it('answers a malformed request with a 422 naming spec.request', async () => {
    const body: V1CertificateSigningRequest = {
      metadata: { name: 'broken' },
      spec: { request: Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n').toString('base64'), signerName: 'example.com/x', usages: ['client auth'] },
    };
    const err = await api.createCertificateSigningRequest({ body }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    const status = JSON.parse((err as ApiException<string>).body);
    expect((err as ApiException<string>).code).toBe(422);
    expect(status.details.causes).toEqual([expect.objectContaining({ field: 'spec.request', reason: 'FieldValueInvalid' })]);
    expect(status.message).not.toMatch(/at \/|node_modules|DerError/);
  });
});
