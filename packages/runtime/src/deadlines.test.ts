import { describe, expect, it } from 'vitest';
import { Deadlines, type Timed } from './deadlines.js';

interface Item extends Timed {
  name: string;
}

const item = (name: string): Item => ({ name, deadline: 0, prevTimed: undefined, nextTimed: undefined });

describe('Deadlines', () => {
  it('expires items in the order they were added, skipping the ones removed, and keeps working once empty', async () => {
    const expired: string[] = [];
    const list = new Deadlines<Item>(40, (i) => expired.push(i.name));
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(item) as [Item, Item, Item, Item];
    for (const i of [a, b, c]) list.add(i, performance.now());
    list.remove(b); // from the middle
    list.remove(b); // twice is harmless
    list.remove(a); // the head, whose deadline the timer was armed for
    await until(() => expired.length === 1);
    expect(expired).toEqual(['c']);
    list.add(d, performance.now());
    await until(() => expired.length === 2);
    expect(expired).toEqual(['c', 'd']);
  });

  it('an item removed before its deadline never expires', async () => {
    const expired: string[] = [];
    const list = new Deadlines<Item>(20, (i) => expired.push(i.name));
    const only = item('only');
    list.add(only, performance.now());
    list.remove(only);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(expired).toEqual([]);
  });
});

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}
