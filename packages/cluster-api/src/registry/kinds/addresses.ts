/**
 * IP address and port rules the endpoint kinds share (Kubernetes' ValidateEndpointIP,
 * validation.IsValidPortNum, IsValidIPv4Address / IsValidIPv6Address), with their messages.
 */
import { isIP } from 'node:net';
import { invalidValue, notSupported, type FieldError } from '../generic/validation.js';

export const Protocols = ['SCTP', 'TCP', 'UDP'] as const;

export const validatePort = (port: unknown, at: string): FieldError[] =>
  Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535 ? [] : [invalidValue(at, port ?? 0, 'must be between 1 and 65535, inclusive')];

export const validateProtocol = (protocol: unknown, at: string): FieldError[] =>
  Protocols.includes(protocol as never) ? [] : [notSupported(at, protocol ?? '', Protocols)];

/** An endpoint's IP: valid, and not one no endpoint may have (loopback, link-local, multicast, unspecified). */
export const validateEndpointIP = (ip: string, at: string): FieldError[] => {
  const family = isIP(ip);
  if (family === 0) return [invalidValue(at, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')];
  const lower = ip.toLowerCase();
  if (ip === '0.0.0.0' || lower === '::') return [invalidValue(at, ip, 'may not be unspecified (0.0.0.0)')];
  if ((family === 4 && ip.startsWith('127.')) || lower === '::1') return [invalidValue(at, ip, 'may not be in the loopback range (127.0.0.0/8, ::1/128)')];
  if ((family === 4 && ip.startsWith('169.254.')) || lower.startsWith('fe80:')) return [invalidValue(at, ip, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)')];
  const first = Number(ip.split('.')[0]);
  if ((family === 4 && first >= 224 && first <= 239) || lower.startsWith('ff')) return [invalidValue(at, ip, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)')];
  return [];
};

export const validateIPOfFamily = (ip: string, family: 4 | 6, at: string): FieldError[] =>
  isIP(ip) === family ? [] : [invalidValue(at, ip, `must be a valid IPv${family} address`)];
