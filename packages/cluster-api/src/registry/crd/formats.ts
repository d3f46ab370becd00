/**
 * The string formats Kubernetes checks in custom resources (apiextensions-apiserver's supported
 * formats over go-openapi's strfmt); any other format is documentation only. Each check answers
 * whether a string is of the format, as the Go parser it names would.
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { Base64 } from '../kinds/common.js';

const uuidOf = (version: string): RegExp =>
  new RegExp(`^[0-9a-f]{8}-?[0-9a-f]{4}-?${version}[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`, 'i');

const Hostname = /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const Email = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const Mac = /^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$|^([0-9a-f]{2}[:-]){7}[0-9a-f]{2}$|^([0-9a-f]{2}[:-]){19}[0-9a-f]{2}$|^([0-9a-f]{4}\.){2}[0-9a-f]{4}$/i;
const GoDuration = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^0$/;
const ScalaDuration = /^\d+\s*(ns|nano|nanos|nanosecond|nanoseconds|us|micro|micros|microsecond|microseconds|ms|milli|millis|millisecond|milliseconds|s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours|d|day|days|w|wk|wks|week|weeks)$/;
const DateTime = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const validDate = (y: number, m: number, d: number): boolean => {
  if (m < 1 || m > 12 || d < 1) return false;
  return d <= new Date(Date.UTC(y, m, 0)).getUTCDate();
};

const isDate = (v: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  return !!m && validDate(Number(m[1]), Number(m[2]), Number(m[3]));
};

const isDateTime = (v: string): boolean => {
  const m = DateTime.exec(v);
  if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  return Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 61;
};

/** net/url.ParseRequestURI: an absolute URI, or an absolute path. */
const isUri = (v: string): boolean => {
  if (v.startsWith('/')) return !/\s/.test(v);
  try {
    return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(v) && new URL(v).protocol !== '' && !/\s/.test(v);
  } catch {
    return false;
  }
};

const isCidr = (v: string): boolean => {
  const [ip, bits, extra] = v.split('/');
  if (extra !== undefined || bits === undefined || !/^\d{1,3}$/.test(bits)) return false;
  const version = isIP(ip ?? '');
  return version !== 0 && Number(bits) <= (version === 4 ? 32 : 128);
};

const digitsOnly = (v: string): string => v.replace(/[\s-]/g, '');
const isIsbn10 = (v: string): boolean => /^(?:[0-9]{9}X|[0-9]{10})$/.test(digitsOnly(v));
const isIsbn13 = (v: string): boolean => /^(?:[0-9]{13})$/.test(digitsOnly(v));

const checks: Readonly<Record<string, (v: string) => boolean>> = {
  bsonobjectid: (v) => /^[0-9a-f]{24}$/i.test(v),
  uri: isUri,
  email: (v) => Email.test(v),
  hostname: (v) => v.length <= 255 && Hostname.test(v),
  ipv4: (v) => isIPv4(v),
  ipv6: (v) => isIPv6(v),
  cidr: isCidr,
  mac: (v) => Mac.test(v),
  uuid: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  uuid3: (v) => uuidOf('3').test(v),
  uuid4: (v) => uuidOf('4').test(v),
  uuid5: (v) => uuidOf('5').test(v),
  isbn: (v) => isIsbn10(v) || isIsbn13(v),
  isbn10: isIsbn10,
  isbn13: isIsbn13,
  creditcard: (v) => /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/.test(digitsOnly(v)),
  ssn: (v) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(v),
  hexcolor: (v) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(v),
  rgbcolor: (v) => /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/.test(v),
  byte: (v) => Base64.test(v),
  password: () => true,
  date: isDate,
  duration: (v) => GoDuration.test(v) || ScalaDuration.test(v),
  datetime: isDateTime,
};

/** go-openapi's name normalisation: `date-time` and `datetime` are one format. */
const normalise = (format: string): string => format.toLowerCase().replace(/[-_]/g, '');

/** Whether `value` is of `format`; true for formats Kubernetes does not check. */
export const matchesFormat = (format: string, value: string): boolean => {
  const check = checks[normalise(format)];
  return check ? check(value) : true;
};
