/** Minting HS256 tokens for local use: dev mode and the `error-api-token` command share this. */
import { SignJWT } from 'jose';

export interface MintOptions {
  secret: Uint8Array;
  scope: string;
  issuer?: string;
  audience?: string[];
  subject?: string;
  /** Lifetime in seconds. */
  ttlSeconds: number;
}

export const mintToken = async (o: MintOptions): Promise<string> => {
  const jwt = new SignJWT({ scope: o.scope })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(`${o.ttlSeconds}s`)
    .setSubject(o.subject ?? 'local-developer');
  if (o.issuer) jwt.setIssuer(o.issuer);
  if (o.audience) jwt.setAudience(o.audience.length === 1 ? o.audience[0]! : o.audience);
  return jwt.sign(o.secret);
};
