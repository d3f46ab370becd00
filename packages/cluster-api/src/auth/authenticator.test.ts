import { describe, expect, it } from 'vitest';
import { parseCsvLine, parseTokenFile, tokenAuthenticator } from './authenticator.js';

describe('token file', () => {
  it('reads kube-apiserver token file lines', () => {
    const users = parseTokenFile('tok1,alice,u1,"dev,ops"\n\n# comment\ntok2,bob,u2\r\ntok3,carol,u3,admins\n');
    expect(users.get('tok1')).toEqual({ name: 'alice', uid: 'u1', groups: ['dev', 'ops'] });
    expect(users.get('tok2')).toEqual({ name: 'bob', uid: 'u2', groups: [] });
    expect(users.get('tok3')).toEqual({ name: 'carol', uid: 'u3', groups: ['admins'] });
  });

  it('parses quoted CSV fields with escaped quotes', () => {
    expect(parseCsvLine('a,"b,c","d""e",')).toEqual(['a', 'b,c', 'd"e', '']);
  });

  it.each(['onlytoken', 'tok,user', ',user,uid', 'tok,,uid', 'tok,user,uid,"unterminated'])('rejects %j by line number without echoing the token', (line) => {
    let message = '';
    try {
      parseTokenFile(`ok,u,1\n${line}\n`);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^token file line 2: /);
    if (line.startsWith('tok')) expect(message).not.toContain('tok,');
  });

  it('authenticates bearer tokens only', () => {
    const auth = tokenAuthenticator(parseTokenFile('secret,alice,u1,dev\n'));
    expect(auth.authenticate('Bearer secret')).toEqual({ name: 'alice', uid: 'u1', groups: ['dev', 'system:authenticated'] });
    expect(auth.authenticate('bearer secret')).toBeDefined();
    for (const bad of [undefined, '', 'Bearer', 'Bearer other', 'Basic c2VjcmV0', 'secret', 'Bearer secret extra'])
      expect(auth.authenticate(bad)).toBeUndefined();
  });
});
