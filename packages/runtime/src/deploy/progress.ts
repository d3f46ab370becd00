/**
 * The rollout as the person who deployed sees it: one line that says how many replicas of the new
 * version are ready and what each pod is doing. On a terminal the line is rewritten in place; into
 * a pipe or a log a new line is printed only when it changes, so a CI log stays short.
 */
import type { RolloutState } from './rollout.js';

export interface Progress {
  update(state: RolloutState): void;
  /** Ends the in-place line (the next output starts on its own line). */
  end(): void;
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

export function progressDisplay(out: NodeJS.WriteStream, image: string): Progress {
  let last = '';
  const tty = out.isTTY === true;
  return {
    update(state) {
      const line = `func-runtime: ${describeRollout(state, image)}`;
      if (line === last) return;
      last = line;
      if (tty) out.write(`\r\x1b[2K${line.slice(0, (out.columns || 120) - 1)}`);
      else out.write(`${line}\n`);
    },
    end() {
      if (tty && last) out.write('\n');
    },
  };
}
