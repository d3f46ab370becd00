/**
 * The controllers `--controllers` turns on and off, by kube-controller-manager's names and aliases
 * (cmd/kube-controller-manager/names), and its flag's grammar: `*` is every controller on by
 * default, `foo` turns foo on, `-foo` turns it off, and the first word naming a controller decides.
 */

export interface ControllerName {
  name: string;
  /** The names kube-controller-manager accepted before 1.28. */
  aliases: readonly string[];
  /** On under `*` (kube-controller-manager's disabledByDefault set is the others). */
  byDefault: boolean;
}

export const ControllerNames: readonly ControllerName[] = [
  { name: 'garbage-collector-controller', aliases: ['garbagecollector'], byDefault: true },
  { name: 'namespace-controller', aliases: ['namespace'], byDefault: true },
  { name: 'clusterrole-aggregation-controller', aliases: ['clusterrole-aggregation'], byDefault: true },
  { name: 'deployment-controller', aliases: ['deployment'], byDefault: true },
  { name: 'replicaset-controller', aliases: ['replicaset'], byDefault: true },
  { name: 'replicationcontroller-controller', aliases: ['replicationcontroller'], byDefault: true },
  { name: 'statefulset-controller', aliases: ['statefulset'], byDefault: true },
  { name: 'daemonset-controller', aliases: ['daemonset'], byDefault: true },
  { name: 'job-controller', aliases: ['job'], byDefault: true },
  { name: 'cronjob-controller', aliases: ['cronjob'], byDefault: true },
  { name: 'ttl-after-finished-controller', aliases: ['ttl-after-finished'], byDefault: true },
  { name: 'endpoints-controller', aliases: ['endpoint'], byDefault: true },
  { name: 'endpointslice-controller', aliases: ['endpointslice'], byDefault: true },
  { name: 'node-ipam-controller', aliases: ['nodeipam'], byDefault: true },
  { name: 'node-lifecycle-controller', aliases: ['nodelifecycle'], byDefault: true },
  { name: 'certificatesigningrequest-approving-controller', aliases: ['csrapproving'], byDefault: true },
  { name: 'certificatesigningrequest-signing-controller', aliases: ['csrsigning'], byDefault: true },
  { name: 'certificatesigningrequest-cleaner-controller', aliases: ['csrcleaner'], byDefault: true },
];

/** The canonical name a word names, or undefined. */
const canonical = (word: string): string | undefined => ControllerNames.find((c) => c.name === word || c.aliases.includes(word))?.name;

/** The words of a `--controllers` value that name no controller (empty when all are known). */
export const unknownControllers = (words: readonly string[]): string[] =>
  words.filter((w) => w !== '*' && canonical(w.startsWith('-') ? w.slice(1) : w) === undefined);

/** IsControllerEnabled: the first word naming the controller decides; else `*` turns on those on by default. */
export const isEnabled = (name: string, words: readonly string[]): boolean => {
  let star = false;
  for (const w of words) {
    if (w === '*') star = true;
    else if (canonical(w) === name) return true;
    else if (w.startsWith('-') && canonical(w.slice(1)) === name) return false;
  }
  return star && ControllerNames.find((c) => c.name === name)?.byDefault === true;
};
