/**
 * The node's cluster DNS: its records (Services, headless endpoints, SRV, pods, reverse), the wire
 * format read and written, a pod's resolv.conf by dnsPolicy, and the server over real UDP and TCP
 * sockets on 127.0.0.1 — cluster names answered, others forwarded to an upstream, garbage dropped —
 * asked with Node's own resolver.
 */
import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookup, type ClusterView, type DnsService } from './records.js';
import { formatResolvConf, parseResolvConf, podResolvConf } from './resolv-conf.js';
import { ClusterDns, nameservers } from './server.js';
import { buildAnswer, parseQuery, Rcode, RecordType } from './wire.js';

const services: DnsService[] = [
  { namespace: 'shop', name: 'web', clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
  { namespace: 'shop', name: 'db', clusterIP: 'None', ports: [{ name: 'sql', port: 5432 }] },
  { namespace: 'shop', name: 'far', type: 'ExternalName', externalName: 'example.org.' },
  { namespace: 'shop', name: 'near', type: 'ExternalName', externalName: 'web.shop.svc.cluster.local' },
  { namespace: 'shop', name: 'loop', type: 'ExternalName', externalName: 'loop.shop.svc.cluster.local' },
  { namespace: 'shop', name: 'ping', type: 'ExternalName', externalName: 'pong.shop.svc.cluster.local' },
  { namespace: 'shop', name: 'pong', type: 'ExternalName', externalName: 'ping.shop.svc.cluster.local' },
];
const view: ClusterView = {
  service: (ns, name) => services.find((s) => s.namespace === ns && s.name === name),
  endpoints: (ns, name) => (ns === 'shop' && name === 'db' ? [{ ip: '10.64.0.5', hostname: 'db-0' }, { ip: '10.64.0.6' }] : []),
  services: () => services,
};
const zone = 'cluster.local';

describe('cluster records', () => {
  it('answers a Service\'s clusterIP, a headless Service\'s endpoints, and CNAME for an ExternalName', () => {
    expect(lookup(view, zone, 'web.shop.svc.cluster.local', RecordType.A)).toEqual({ rcode: Rcode.NoError, answers: [{ type: RecordType.A, name: 'web.shop.svc.cluster.local', ttl: 5, address: '10.96.0.20' }] });
    expect(lookup(view, zone, 'db.shop.svc.cluster.local', RecordType.A).answers.map((a) => 'address' in a && a.address)).toEqual(['10.64.0.5', '10.64.0.6']);
    expect(lookup(view, zone, 'db-0.db.shop.svc.cluster.local', RecordType.A).answers.map((a) => 'address' in a && a.address)).toEqual(['10.64.0.5']);
    expect(lookup(view, zone, '10-64-0-6.db.shop.svc.cluster.local', RecordType.A).answers.map((a) => 'address' in a && a.address)).toEqual(['10.64.0.6']);
    expect(lookup(view, zone, 'far.shop.svc.cluster.local', RecordType.A).answers).toEqual([{ type: RecordType.CNAME, name: 'far.shop.svc.cluster.local', ttl: 5, target: 'example.org' }]);
  });

  it('follows an ExternalName into the zone (a Route\'s placeholder to the gateway\'s Service), and stops on a loop', () => {
    expect(lookup(view, zone, 'near.shop.svc.cluster.local', RecordType.A).answers).toEqual([
      { type: RecordType.CNAME, name: 'near.shop.svc.cluster.local', ttl: 5, target: 'web.shop.svc.cluster.local' },
      { type: RecordType.A, name: 'web.shop.svc.cluster.local', ttl: 5, address: '10.96.0.20' },
    ]);
    expect(lookup(view, zone, 'loop.shop.svc.cluster.local', RecordType.A).answers).toHaveLength(1);
    expect(lookup(view, zone, 'ping.shop.svc.cluster.local', RecordType.A)).toMatchObject({ rcode: Rcode.NoError });
  });

  it('gives SRV for a named port, an address for a pod name, PTR for a clusterIP', () => {
    expect(lookup(view, zone, '_http._tcp.web.shop.svc.cluster.local', RecordType.SRV).answers).toEqual([{ type: RecordType.SRV, name: '_http._tcp.web.shop.svc.cluster.local', ttl: 5, priority: 0, weight: 100, port: 80, target: 'web.shop.svc.cluster.local' }]);
    expect(lookup(view, zone, '10-64-1-2.shop.pod.cluster.local', RecordType.A).answers.map((a) => 'address' in a && a.address)).toEqual(['10.64.1.2']);
    expect(lookup(view, zone, '20.0.96.10.in-addr.arpa', RecordType.PTR).answers).toEqual([{ type: RecordType.PTR, name: '20.0.96.10.in-addr.arpa', ttl: 5, target: 'web.shop.svc.cluster.local' }]);
  });

  it('says NXDOMAIN for a name of the zone that is not there, NOERROR with nothing for a type it does not have, and leaves other reverse names to the upstream', () => {
    expect(lookup(view, zone, 'nope.shop.svc.cluster.local', RecordType.A)).toEqual({ rcode: Rcode.NXDomain, answers: [] });
    expect(lookup(view, zone, 'x.y.z.w.v.svc.cluster.local', RecordType.A).rcode).toBe(Rcode.NXDomain);
    expect(lookup(view, zone, 'not-an-ip.shop.pod.cluster.local', RecordType.A).rcode).toBe(Rcode.NXDomain);
    expect(lookup(view, zone, 'web.shop.svc.cluster.local', RecordType.AAAA)).toEqual({ rcode: Rcode.NoError, answers: [] });
    expect(lookup(view, zone, 'shop.svc.cluster.local', RecordType.A).rcode).toBe(Rcode.NoError);
    expect(lookup(view, zone, 'empty.svc.cluster.local', RecordType.A).rcode).toBe(Rcode.NXDomain);
    expect(lookup(view, zone, '1.1.168.192.in-addr.arpa', RecordType.PTR).rcode).toBe(-1);
  });
});

/** A query for `name` (type A), as a stub resolver sends it. */
const query = (name: string, type: number = RecordType.A, id = 0x1234): Buffer => {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(type, 0);
  tail.writeUInt16BE(1, 2);
  const head = Buffer.alloc(12);
  head.writeUInt16BE(id, 0);
  head.writeUInt16BE(0x0100, 2);
  head.writeUInt16BE(1, 4);
  return Buffer.concat([head, ...labels, Buffer.from([0]), tail]);
};

describe('the wire format', () => {
  it('reads a query and answers it with its id, question, RD echoed and AA for the cluster\'s names', () => {
    const q = parseQuery(query('Web.Shop.svc.cluster.local'))!;
    expect(q).toMatchObject({ id: 0x1234, name: 'web.shop.svc.cluster.local', type: RecordType.A, class: 1 });
    const out = buildAnswer(q, Rcode.NoError, [{ type: RecordType.A, name: q.name, ttl: 5, address: '10.96.0.20' }], true);
    expect(out.readUInt16BE(0)).toBe(0x1234);
    expect(out.readUInt16BE(2)).toBe(0x8000 | 0x0400 | 0x0100 | 0x0080);
    expect(out.readUInt16BE(6)).toBe(1);
    expect([...out.subarray(-4)]).toEqual([10, 96, 0, 20]);
  });

  it('reads nothing from what is not a query: short, a response, a bad label, two questions', () => {
    expect(parseQuery(Buffer.alloc(5))).toBeUndefined();
    const response = query('a.b');
    response.writeUInt16BE(0x8100, 2);
    expect(parseQuery(response)).toBeUndefined();
    const bad = query('a.b');
    bad[12] = 200;
    expect(parseQuery(bad)).toBeUndefined();
    const two = query('a.b');
    two.writeUInt16BE(2, 4);
    expect(parseQuery(two)).toBeUndefined();
    expect(parseQuery(query('a.b').subarray(0, 16))).toBeUndefined();
  });
});

describe('a pod\'s resolv.conf', () => {
  const host = parseResolvConf('# host\nnameserver 10.255.255.53\nsearch corp.example\noptions edns0\n');
  const pod = (spec: Record<string, unknown> = {}) => ({ metadata: { name: 'p', namespace: 'shop' }, spec: { containers: [], ...spec } }) as never;

  it('is the cluster\'s for ClusterFirst: its server, the namespace\'s searches then the host\'s, ndots:5', () => {
    expect(formatResolvConf(podResolvConf(pod(), '10.96.0.10', zone, host))).toBe('nameserver 10.96.0.10\nsearch shop.svc.cluster.local svc.cluster.local cluster.local corp.example\noptions ndots:5\n');
  });

  it('is the host\'s for Default, for a hostNetwork pod\'s ClusterFirst, and without a cluster DNS', () => {
    const hosts = { nameservers: ['10.255.255.53'], searches: ['corp.example'], options: ['edns0'] };
    expect(podResolvConf(pod({ dnsPolicy: 'Default' }), '10.96.0.10', zone, host)).toEqual(hosts);
    expect(podResolvConf(pod({ hostNetwork: true }), '10.96.0.10', zone, host)).toEqual(hosts);
    expect(podResolvConf(pod(), undefined, zone, host)).toEqual(hosts);
    expect(podResolvConf(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), '10.96.0.10', zone, host).nameservers).toEqual(['10.96.0.10']);
  });

  it('takes dnsConfig: only it for None, appended and merged by option name otherwise', () => {
    const none = podResolvConf(pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['a.example'], options: [{ name: 'ndots', value: '2' }] } }), '10.96.0.10', zone, host);
    expect(none).toEqual({ nameservers: ['1.1.1.1'], searches: ['a.example'], options: ['ndots:2'] });
    const merged = podResolvConf(pod({ dnsConfig: { nameservers: ['10.96.0.10', '1.1.1.1'], options: [{ name: 'ndots', value: '1' }, { name: 'single-request' }] } }), '10.96.0.10', zone, host);
    expect(merged).toMatchObject({ nameservers: ['10.96.0.10', '1.1.1.1'], options: ['ndots:1', 'single-request'] });
  });
});

describe('the cluster DNS server', () => {
  let dns: ClusterDns;
  let upstream: ReturnType<typeof createSocket>;
  const resolver = new Resolver({ timeout: 2000, tries: 1 });

  beforeAll(async () => {
    // An upstream that knows one name outside the cluster.
    upstream = createSocket('udp4');
    upstream.on('message', (msg, from) => {
      const q = parseQuery(msg);
      if (!q) return;
      const out = q.name === 'outside.example' ? buildAnswer(q, Rcode.NoError, [{ type: RecordType.A, name: q.name, ttl: 60, address: '192.0.2.7' }], false) : buildAnswer(q, Rcode.NXDomain, [], false);
      upstream.send(out, from.port, from.address);
    });
    await new Promise<void>((resolve) => upstream.bind(0, '127.0.0.1', resolve));
    dns = new ClusterDns({ address: '127.0.0.1', port: 0, zone, view, upstreams: ['127.0.0.1'], upstreamPort: upstream.address().port });
    await dns.start();
    resolver.setServers([`127.0.0.1:${dns.port}`]);
  });
  afterAll(async () => {
    await dns?.stop();
    upstream?.close();
  });

  it('answers the cluster\'s names over UDP, as Node\'s resolver asks', async () => {
    expect(await resolver.resolve4('web.shop.svc.cluster.local')).toEqual(['10.96.0.20']);
    expect(await resolver.resolve4('near.shop.svc.cluster.local')).toEqual(['10.96.0.20']);
    expect(await resolver.resolveCname('far.shop.svc.cluster.local')).toEqual(['example.org']);
    expect((await resolver.resolve4('db.shop.svc.cluster.local')).sort()).toEqual(['10.64.0.5', '10.64.0.6']);
    expect(await resolver.resolveSrv('_http._tcp.web.shop.svc.cluster.local')).toEqual([{ name: 'web.shop.svc.cluster.local', port: 80, priority: 0, weight: 100 }]);
    expect(await resolver.reverse('10.96.0.20')).toEqual(['web.shop.svc.cluster.local']);
    await expect(resolver.resolve4('nope.shop.svc.cluster.local')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('forwards other names to the upstream, and its NXDOMAIN too', async () => {
    expect(await resolver.resolve4('outside.example')).toEqual(['192.0.2.7']);
    await expect(resolver.resolve4('missing.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('answers over TCP with the two-byte length, and drops garbage without stopping', async () => {
    const garbage = createSocket('udp4');
    garbage.send(Buffer.from('not dns at all'), dns.port, '127.0.0.1', () => garbage.close());
    const answer = await new Promise<Buffer>((resolve, reject) => {
      const q = query('web.shop.svc.cluster.local', RecordType.A, 7);
      const len = Buffer.alloc(2);
      len.writeUInt16BE(q.length);
      const socket = connect(dns.tcpPort, '127.0.0.1', () => socket.write(Buffer.concat([len, q])));
      let got = Buffer.alloc(0);
      socket.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) (socket.destroy(), resolve(got.subarray(2)));
      }).on('error', reject);
    });
    expect(answer.readUInt16BE(0)).toBe(7);
    expect([...answer.subarray(-4)]).toEqual([10, 96, 0, 20]);
    expect(await resolver.resolve4('web.shop.svc.cluster.local')).toEqual(['10.96.0.20']);
  });

  it('reads nameserver lines of a resolv.conf', () => {
    expect(nameservers('# x\nnameserver 10.0.0.2\nsearch a\n  nameserver ::1\n')).toEqual(['10.0.0.2', '::1']);
  });
});
