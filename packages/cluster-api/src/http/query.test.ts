import { describe, expect, it } from 'vitest';
import { deleteOptionsOf, dryRunOf, listQueryOf, watchQueryOf } from './query.js';

const q = (s: string) => new URLSearchParams(s);

describe('query parameters', () => {
  it('reads a list query', () => {
    expect(listQueryOf(q('labelSelector=a%3Db&fieldSelector=status.phase%3DRunning&limit=500&continue=tok&resourceVersion=0'))).toEqual({
      labelSelector: 'a=b', fieldSelector: 'status.phase=Running', limit: 500, continue: 'tok', resourceVersion: '0', resourceVersionMatch: undefined,
    });
    expect(watchQueryOf(q('resourceVersion=7&allowWatchBookmarks=true'), 'p')).toMatchObject({ resourceVersion: '7', allowWatchBookmarks: true, name: 'p' });
  });

  it.each(['limit=-1', 'limit=abc', 'limit=1.5', 'resourceVersionMatch=Newest'])('refuses %s with 400', (s) => {
    expect(() => listQueryOf(q(s))).toThrow(expect.objectContaining({ code: 400 }));
  });

  it.each([
    ['true', true], ['True', true], ['TRUE', true], ['t', true], ['1', true], ['yes', true], ['', true],
    ['false', false], ['False', false], ['FALSE', false], ['0', false],
  ])('reads allowWatchBookmarks=%s as kube-apiserver does: %s', (v, want) => {
    expect(watchQueryOf(q(`allowWatchBookmarks=${v}`), undefined).allowWatchBookmarks).toBe(want);
  });

  it('accepts only dryRun=All', () => {
    expect(dryRunOf(q(''))).toBe(false);
    expect(dryRunOf(q('dryRun=All'))).toBe(true);
    expect(() => dryRunOf(q('dryRun=true'))).toThrow(expect.objectContaining({ code: 400 }));
  });

  it('merges DeleteOptions from the query and the body, the body winning', () => {
    expect(deleteOptionsOf(q('gracePeriodSeconds=5&propagationPolicy=Orphan'), undefined)).toEqual({ gracePeriodSeconds: 5, propagationPolicy: 'Orphan' });
    expect(deleteOptionsOf(q('gracePeriodSeconds=5'), { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, preconditions: { uid: 'u' } })).toMatchObject({
      gracePeriodSeconds: 0, preconditions: { uid: 'u' },
    });
    expect(deleteOptionsOf(q('orphanDependents=false'), undefined)).toEqual({ orphanDependents: false });
  });

  it.each([
    ['gracePeriodSeconds=-1', undefined],
    ['propagationPolicy=Later', undefined],
    ['', { gracePeriodSeconds: 'soon' }],
    ['', { kind: 'Pod' }],
    ['', [1, 2]],
    ['', 'text'],
    ['', { orphanDependents: 'yes' }],
    ['', { propagationPolicy: 'Sometimes' }],
  ])('refuses DeleteOptions %s %j with 400', (s, body) => {
    expect(() => deleteOptionsOf(q(s), body)).toThrow(expect.objectContaining({ code: 400 }));
  });
});
