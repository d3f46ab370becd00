/**
 * Progress, one mechanism for every step that can take a while (bundle, type-check, base image
 * pull, image layers, push, apply, rollout, Triggers, where it answers): a status line. On a terminal it is one line rewritten in place; into a
 * pipe, a log or CI (`CI` set) a line is printed only when its text changes, so a CI log stays
 * short. A step that ends within a second prints nothing; a longer one says what it is doing, and
 * on a terminal for how long, then how long it took; one that fails leaves the saying to its error.
 */
import type { RolloutState } from './rollout.js';

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface StatusLine {
  show(text: string): void;
  /** Ends the line (the next output starts on its own line), after `final` when given. */
  end(final?: string): void;
  /** Takes an in-place line away (the error that follows stands alone); a printed line stays. */
  erase(): void;
}

/** What a step's lines look like, for whoever reads the output (tests, log filters). */
export const STEP_LINE = /^func-runtime: [^\n]*?(…( \d+ s)?|: done in \d+\.\d s)$/;

/** Whether the line is rewritten in place: a terminal, and not CI. */
export const live = (out: ProgressStream, env: NodeJS.ProcessEnv = process.env): boolean => out.isTTY === true && !env.CI;

export function statusLine(out: ProgressStream, env: NodeJS.ProcessEnv = process.env): StatusLine {
  const inPlace = live(out, env);
  let last = '';
  const show = (text: string) => {
    const line = `func-runtime: ${text}`;
    if (line === last) return;
    last = line;
    if (inPlace) out.write(`\r\x1b[2K${line.slice(0, (out.columns || 120) - 1)}`);
    else out.write(`${line}\n`);
  };
  return {
    show,
    end(final) {
      if (final !== undefined) show(final);
      if (inPlace && last) out.write('\n');
      last = '';
    },
    erase() {
      if (inPlace && last) out.write('\r\x1b[2K');
      last = '';
    },
  };
}

export interface Steps {
  /** Resolves as `work` does; says what is happening once it has taken longer than the threshold. */
  run<T>(label: string, work: Promise<T>): Promise<T>;
}

/** Steps that are never shown (a library caller, a dry run's quiet parts). */
export const quietSteps: Steps = { run: (_label, work) => work };

export function steps(out: ProgressStream, opts: { afterMs?: number; env?: NodeJS.ProcessEnv } = {}): Steps {
  const afterMs = opts.afterMs ?? 1000;
  const env = opts.env ?? process.env;
  return {
    async run(label, work) {
      const started = performance.now();
      const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
      let line: StatusLine | undefined;
      let ticker: NodeJS.Timeout | undefined;
      const begin = () => {
        line = statusLine(out, env);
        if (!live(out, env)) return line.show(`${label}…`);
        const tick = () => line!.show(`${label}… ${Math.floor((performance.now() - started) / 1000)} s`);
        tick();
        ticker = setInterval(tick, 1000).unref();
      };
      const wait = setTimeout(begin, afterMs).unref();
      try {
        const value = await work;
        line?.end(`${label}: done in ${seconds()} s`);
        return value;
      } catch (err) {
        line?.erase();
        throw err;
      } finally {
        clearTimeout(wait);
        clearInterval(ticker);
      }
    },
  };
}

const short = (image: string) => image.replace(/@sha256:([0-9a-f]{12})[0-9a-f]+$/, '@sha256:$1…');

/** kubectl's wording, per version: how many of the new version's replicas are ready, and each pod. */
export function describeRollout(state: RolloutState, image: string): string {
  const pods = state.pods.filter((p) => p.status !== 'Terminating' || p.image !== image);
  const ready = state.pods.filter((p) => p.image === image && p.ready && p.status !== 'Terminating').length;
  const shown = pods.slice(0, 4).map((p) => `${p.name} ${p.status}${p.ready ? ' (ready)' : ''}${p.image === image ? '' : ' (old)'}`);
  const more = pods.length > shown.length ? `, +${pods.length - shown.length} more` : '';
  return `rolling out ${short(image)}: ${Math.min(ready, state.desired)}/${state.desired} ready${shown.length ? ` — ${shown.join(', ')}${more}` : ''}`;
}

export interface Progress {
  update(state: RolloutState): void;
  end(): void;
}

/** The rollout's status line: the ready count and each pod, as they change. */
export function progressDisplay(out: ProgressStream, image: string): Progress {
  const line = statusLine(out);
  return { update: (state) => line.show(describeRollout(state, image)), end: () => line.end() };
}
