/**
 * Client certificate authentication, as kube-apiserver's x509 authenticator (`--client-ca-file`):
 * a certificate the client CA signed (TLS verifies the chain; the server asks for a certificate but
 * does not require one) names the user in its CN and the groups in its O entries. This is how node
 * agents authenticate (`system:node:<name>` in `system:nodes`), and the in-process scheduler
 * (`system:kube-scheduler`). The user is worked out once per connection.
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from '../registry/rest.js';

const users = new WeakMap<Socket, UserInfo | null>();

const list = (v: string | string[] | undefined): string[] => (Array.isArray(v) ? v : v ? [v] : []);

/** The verified client certificate's user, or undefined (no certificate, or one the CA did not sign). */
export function clientCertificateUser(socket: Socket): UserInfo | undefined {
  const known = users.get(socket);
  if (known !== undefined) return known ?? undefined;
  const tls = socket as TLSSocket;
  let user: UserInfo | null = null;
  if (tls.encrypted && tls.authorized) {
    const subject = tls.getPeerCertificate()?.subject as unknown as Record<string, string | string[]> | undefined;
    const name = list(subject?.CN)[0];
    if (name) user = { name, uid: '', groups: [...list(subject?.O), 'system:authenticated'] };
  }
  users.set(socket, user);
  return user ?? undefined;
}
