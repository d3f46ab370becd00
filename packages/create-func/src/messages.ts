import { relative } from 'node:path';
import type { Plan } from './plan.js';

/** What to type next, printed once the project is in place. */
export function nextSteps(plan: Plan): string {
  const rows: [string, string][] = [];
  const where = relative(process.cwd(), plan.targetDir);
  const dir = where.startsWith('..') ? plan.targetDir : where;
  if (where !== '') rows.push([`cd ${/[\s'"$`\\]/.test(dir) ? JSON.stringify(dir) : dir}`, '']);
  if (!plan.install) rows.push(['npm install', 'install the dependencies']);
  rows.push(
    ['npm test', 'type check, unit and integration tests'],
    ['npm start', 'serve the function on http://localhost:8080'],
    ['npm run invoke', `in another terminal: send it ${plan.template === 'http' ? 'a request' : 'a CloudEvent'}`],
    ['npm run dev', 'serve and reload on every save'],
    ['npm run deploy', 'run it on the cluster your kubeconfig names, as an image'],
  );
  const width = Math.max(...rows.map(([command]) => command.length));
  const lines = rows.map(([command, note]) => `  ${command.padEnd(width)}${note ? `   # ${note}` : ''}`.trimEnd());
  return `\nDone. Next:\n\n${lines.join('\n')}\n\nSee README.md in the project for the deploy loop, the image build and func.yaml.\n`;
}
